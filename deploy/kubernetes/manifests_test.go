package kubernetes

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/zclconf/go-cty/cty"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// kinds are the API types the manifests may hold, by apiVersion and kind.
var kinds = map[string]func() any{
	"apps/v1 Deployment":                      func() any { return new(appsv1.Deployment) },
	"v1 Service":                              func() any { return new(corev1.Service) },
	"v1 ConfigMap":                            func() any { return new(corev1.ConfigMap) },
	"policy/v1 PodDisruptionBudget":           func() any { return new(policyv1.PodDisruptionBudget) },
	"autoscaling/v2 HorizontalPodAutoscaler":  func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	"monitoring.coreos.com/v1 ServiceMonitor": func() any { return new(monitoringv1.ServiceMonitor) },
	"networking.k8s.io/v1 NetworkPolicy":      func() any { return new(networkingv1.NetworkPolicy) },
}

// decode decodes one YAML document strictly into the API type its
// apiVersion and kind name: an unknown field, a duplicate key or a kind
// not in kinds is an error.
func decode(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return nil, errors.New("no apiVersion or kind")
	}
	mk := kinds[tm.APIVersion+" "+tm.Kind]
	if mk == nil {
		return nil, fmt.Errorf("%s %s is not a kind these manifests use", tm.APIVersion, tm.Kind)
	}
	obj := mk()
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, fmt.Errorf("%s %s: %v", tm.APIVersion, tm.Kind, err)
	}
	return obj, nil
}

// documents splits a YAML stream at its --- lines and drops the documents
// that hold nothing (blank or comments only).
func documents(r io.Reader) ([][]byte, error) {
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var docs [][]byte
	for {
		d, err := yr.Read()
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(d)
		if err != nil {
			return nil, err
		}
		if s := string(bytes.TrimSpace(j)); s != "null" && s != "" {
			docs = append(docs, d)
		}
	}
}

// manifests holds the decoded objects, one of each kind.
type manifests struct {
	deployment     *appsv1.Deployment
	service        *corev1.Service
	configMap      *corev1.ConfigMap
	pdb            *policyv1.PodDisruptionBudget
	hpa            *autoscalingv2.HorizontalPodAutoscaler
	serviceMonitor *monitoringv1.ServiceMonitor
	networkPolicy  *networkingv1.NetworkPolicy
}

// kustomizationFile is the Kustomize base's file: not a manifest.
const kustomizationFile = "kustomization.yaml"

// manifestFiles returns the manifests: every *.yaml file here but the
// kustomization.
func manifestFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return f == kustomizationFile })
	if len(files) == 0 {
		t.Fatal("no manifests")
	}
	return files
}

// load decodes every document of every manifest file here, as written;
// every error is reported.
func load(t *testing.T) manifests {
	t.Helper()
	var streams []stream
	for _, file := range manifestFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, stream{file, b})
	}
	return decodeAll(t, streams...)
}

// stream is a YAML stream and where it comes from.
type stream struct {
	name string
	data []byte
}

// decodeAll decodes every document of the streams strictly and expects one
// object of each kind; every error is reported.
func decodeAll(t *testing.T, streams ...stream) manifests {
	t.Helper()
	var m manifests
	count := map[string]int{}
	for _, st := range streams {
		docs, err := documents(bytes.NewReader(st.data))
		if err != nil {
			t.Errorf("%s: %v", st.name, err)
			continue
		}
		for i, doc := range docs {
			obj, err := decode(doc)
			if err != nil {
				t.Errorf("%s, document %d: %v", st.name, i+1, err)
				continue
			}
			count[fmt.Sprintf("%T", obj)]++
			switch o := obj.(type) {
			case *appsv1.Deployment:
				m.deployment = o
			case *corev1.Service:
				m.service = o
			case *corev1.ConfigMap:
				m.configMap = o
			case *policyv1.PodDisruptionBudget:
				m.pdb = o
			case *autoscalingv2.HorizontalPodAutoscaler:
				m.hpa = o
			case *monitoringv1.ServiceMonitor:
				m.serviceMonitor = o
			case *networkingv1.NetworkPolicy:
				m.networkPolicy = o
			}
		}
	}
	for _, mk := range kinds {
		if k := fmt.Sprintf("%T", mk()); count[k] != 1 {
			t.Errorf("%d objects of type %s, want 1", count[k], k)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return m
}

// TestStrictDecoding: the decoder refuses what a typo or a stale apiVersion
// would make, so that the manifests' decoding can fail.
func TestStrictDecoding(t *testing.T) {
	const good = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: x\nspec:\n  maxUnavailable: 1\n"
	if _, err := decode([]byte(good)); err != nil {
		t.Fatalf("a good document: %v", err)
	}
	for _, tc := range []struct{ name, doc string }{
		{"unknown field", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replica: 2\n"},
		{"field of another level", "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  selector: {}\n"},
		{"duplicate key", good + "  maxUnavailable: 2\n"},
		{"wrong type", "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: x\nspec:\n  minReplicas: two\n"},
		{"old apiVersion", "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: x\n"},
		{"unknown kind", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n"},
		{"no kind", "metadata:\n  name: x\n"},
		{"probe typo", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n        - name: x\n          livenessProbe:\n            httpGet:\n              path: /\n              port: 1\n              header: x\n"},
		{"ServiceMonitor typo", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: x\nspec:\n  endpoints:\n    - ports: metrics\n"},
	} {
		if _, err := decode([]byte(tc.doc)); err == nil {
			t.Errorf("%s: decoded without error", tc.name)
		}
	}
	docs, err := documents(strings.NewReader("# comment only\n---\n" + good + "---\n\n---\n" + good))
	if err != nil || len(docs) != 2 {
		t.Errorf("documents: %d, %v; want 2 (the empty and comment-only ones dropped)", len(docs), err)
	}
}

// TestManifestsDecode: every manifest decodes strictly, one object of
// each kind, each named and labelled.
func TestManifestsDecode(t *testing.T) {
	m := load(t)
	for _, meta := range []metav1.ObjectMeta{m.deployment.ObjectMeta, m.service.ObjectMeta, m.configMap.ObjectMeta,
		m.pdb.ObjectMeta, m.hpa.ObjectMeta, m.serviceMonitor.ObjectMeta, m.networkPolicy.ObjectMeta} {
		if meta.Name == "" || meta.Labels["app.kubernetes.io/name"] != "orderly" {
			t.Errorf("%q: want a name and the label app.kubernetes.io/name=orderly", meta.Name)
		}
		if meta.Namespace != "" {
			t.Errorf("%s names namespace %s: leave it to kubectl -n", meta.Name, meta.Namespace)
		}
	}
}

// orderlyContainer returns the Deployment's orderly container.
func orderlyContainer(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	for i := range d.Spec.Template.Spec.Containers {
		if c := &d.Spec.Template.Spec.Containers[i]; c.Name == "orderly" {
			return c
		}
	}
	t.Fatal("the Deployment has no container orderly")
	return nil
}

// containerPort resolves a port given by name or number to a container
// port of c.
func containerPort(c *corev1.Container, p intstr.IntOrString) (int32, bool) {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

func namedPort(t *testing.T, c *corev1.Container, name string) int32 {
	t.Helper()
	n, ok := containerPort(c, intstr.FromString(name))
	if !ok {
		t.Fatalf("container %s has no port named %s", c.Name, name)
	}
	return n
}

// TestDeploymentHardening: replicas, resources and the security context.
func TestDeploymentHardening(t *testing.T) {
	m := load(t)
	d := m.deployment
	spec := d.Spec.Template.Spec
	c := orderlyContainer(t, d)
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas %v: want at least 2", d.Spec.Replicas)
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Error("a rolling update may take a replica down before its successor is ready: want maxUnavailable 0")
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("selector %v does not select the pod template's labels %v (%v)", d.Spec.Selector, d.Spec.Template.Labels, err)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("no %s request", r)
		}
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.Cmp(c.Resources.Requests[corev1.ResourceMemory]) < 0 {
		t.Errorf("memory limit %v: want one at least the request", c.Resources.Limits.Memory())
	}
	psc, csc := spec.SecurityContext, c.SecurityContext
	if psc == nil || csc == nil {
		t.Fatal("no pod or container securityContext")
	}
	if !(isTrue(csc.RunAsNonRoot) || (csc.RunAsNonRoot == nil && isTrue(psc.RunAsNonRoot))) {
		t.Error("runAsNonRoot is not true")
	}
	if uid := psc.RunAsUser; uid == nil || *uid == 0 {
		t.Errorf("runAsUser %v: want the image's non-root user (65532)", uid)
	}
	if !isTrue(csc.ReadOnlyRootFilesystem) {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if csc.Capabilities == nil || !slices.Contains(csc.Capabilities.Drop, "ALL") || len(csc.Capabilities.Add) > 0 {
		t.Errorf("capabilities %+v: want drop ALL, add none", csc.Capabilities)
	}
	seccomp := psc.SeccompProfile
	if csc.SeccompProfile != nil {
		seccomp = csc.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("seccompProfile %+v: want RuntimeDefault", seccomp)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the pod gets a service account token it never uses")
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	for _, vm := range c.VolumeMounts {
		v, ok := vols[vm.Name]
		switch {
		case !ok:
			t.Errorf("volumeMount %s: no such volume", vm.Name)
		case !vm.ReadOnly && v.EmptyDir == nil:
			t.Errorf("volumeMount %s at %s is writable: only emptyDir volumes should be", vm.Name, vm.MountPath)
		case vm.SubPath != "":
			t.Errorf("volumeMount %s uses subPath: its files would never be updated", vm.Name)
		}
		delete(vols, vm.Name)
	}
	for name := range vols {
		t.Errorf("volume %s is never mounted", name)
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

// TestProbes: liveness and readiness probes kubelet can pass: httpGet on
// the admin port, /-/healthy and /-/ready, which orderly answers without
// the admin token (never in the pod spec). TestServeAndProbe runs the
// probes against orderly.
func TestProbes(t *testing.T) {
	m := load(t)
	c := orderlyContainer(t, m.deployment)
	admin := namedPort(t, c, "admin")
	for _, p := range []struct {
		what, path string
		probe      *corev1.Probe
	}{
		{"liveness", "/-/healthy", c.LivenessProbe},
		{"readiness", "/-/ready", c.ReadinessProbe},
	} {
		pr := p.probe
		switch {
		case pr == nil:
			t.Errorf("no %s probe", p.what)
		case pr.HTTPGet != nil:
			port, ok := containerPort(c, pr.HTTPGet.Port)
			if !ok || port != admin || pr.HTTPGet.Path != p.path {
				t.Errorf("%s probe GET %s on port %s: want %s on the admin port", p.what, pr.HTTPGet.Path, pr.HTTPGet.Port.String(), p.path)
			}
			for _, h := range pr.HTTPGet.HTTPHeaders {
				if strings.EqualFold(h.Name, "Authorization") {
					t.Errorf("%s probe carries the admin token in the pod spec, where anyone who reads the Deployment finds it", p.what)
				}
			}
		case pr.TCPSocket != nil:
			t.Errorf("%s probe: a TCP check proves less than GET %s", p.what, p.path)
		case pr.Exec != nil:
			t.Errorf("%s probe runs %q: the distroless image has no shell or HTTP client", p.what, pr.Exec.Command)
		default:
			t.Errorf("%s probe: want httpGet or tcpSocket", p.what)
		}
	}
}

// hclConfig is the orderly.hcl of the ConfigMap.
type hclConfig struct {
	body *hclsyntax.Body
}

func parseConfig(t *testing.T, src string) hclConfig {
	t.Helper()
	f, diags := hclparse.NewParser().ParseHCL([]byte(src), "orderly.hcl")
	if diags.HasErrors() {
		t.Fatalf("the ConfigMap's orderly.hcl: %s", diags.Error())
	}
	return hclConfig{f.Body.(*hclsyntax.Body)}
}

// str returns the string attribute at a dotted path (metrics.listen), or "".
func (h hclConfig) str(t *testing.T, name string) string {
	t.Helper()
	b := h.body
	parts := strings.Split(name, ".")
	for _, blk := range parts[:len(parts)-1] {
		var next *hclsyntax.Body
		for _, bl := range b.Blocks {
			if bl.Type == blk {
				next = bl.Body
			}
		}
		if next == nil {
			return ""
		}
		b = next
	}
	a := b.Attributes[parts[len(parts)-1]]
	if a == nil {
		return ""
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.String {
		t.Fatalf("orderly.hcl %s: not a string literal", name)
	}
	return v.AsString()
}

func listenPort(t *testing.T, what, addr string) int32 {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	n, err2 := strconv.Atoi(p)
	if err != nil || err2 != nil {
		t.Fatalf("orderly.hcl %s %q: want host:port", what, addr)
	}
	return int32(n)
}

// configPath returns the -config argument the container runs with.
func configPath(t *testing.T, c *corev1.Container) string {
	t.Helper()
	args := append(slices.Clone(c.Command), c.Args...)
	for i, a := range args {
		if a == "-config" && i+1 < len(args) {
			return args[i+1]
		}
	}
	t.Fatalf("container %s: no -config in %q", c.Name, args)
	return ""
}

// mountFor returns the volumeMount a container path is under.
func mountFor(c *corev1.Container, p string) (corev1.VolumeMount, bool) {
	var best corev1.VolumeMount
	for _, vm := range c.VolumeMounts {
		if rel, err := filepath.Rel(vm.MountPath, p); err == nil && !strings.HasPrefix(rel, "..") && len(vm.MountPath) > len(best.MountPath) {
			best = vm
		}
	}
	return best, best.Name != ""
}

// TestObjectsAgree: the Service, the PodDisruptionBudget, the
// HorizontalPodAutoscaler and the ServiceMonitor point at the Deployment's
// pods and ports, and those ports are the ones orderly.hcl listens on.
func TestObjectsAgree(t *testing.T) {
	m := load(t)
	d := m.deployment
	c := orderlyContainer(t, d)
	pod := labels.Set(d.Spec.Template.Labels)

	cfgFile := configPath(t, c)
	src, ok := m.configMap.Data[path.Base(cfgFile)]
	if !ok {
		t.Fatalf("the ConfigMap has no %s", path.Base(cfgFile))
	}
	cfg := parseConfig(t, src)
	for name, attr := range map[string]string{"http": "listen", "metrics": "metrics.listen", "admin": "admin.listen"} {
		if got, want := listenPort(t, attr, cfg.str(t, attr)), namedPort(t, c, name); got != want {
			t.Errorf("orderly.hcl %s port %d, container port %s %d", attr, got, name, want)
		}
	}

	// Service: selects the pods, its ports are container ports.
	s := m.service
	if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(pod) {
		t.Errorf("Service selector %v does not select the pods (%v)", s.Spec.Selector, pod)
	}
	svcPorts := map[string]bool{}
	for _, p := range s.Spec.Ports {
		svcPorts[p.Name] = true
		if _, ok := containerPort(c, p.TargetPort); !ok {
			t.Errorf("Service port %s: targetPort %s is no container port", p.Name, p.TargetPort.String())
		}
	}
	if !svcPorts["http"] || !svcPorts["metrics"] || svcPorts["admin"] {
		t.Errorf("Service ports %v: want http and metrics; admin is per pod", svcPorts)
	}

	// PodDisruptionBudget: selects the pods and lets a drain evict one.
	pdb := m.pdb
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(pod) {
		t.Errorf("PodDisruptionBudget selector %v does not select the pods", pdb.Spec.Selector)
	}
	replicas := int(*d.Spec.Replicas)
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, replicas, false); err != nil || n < 1 || n >= replicas {
			t.Errorf("PodDisruptionBudget maxUnavailable %s of %d: want at least one, and not all", pdb.Spec.MaxUnavailable.String(), replicas)
		}
	case pdb.Spec.MinAvailable != nil:
		if n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, replicas, true); err != nil || n < 1 || n >= replicas {
			t.Errorf("PodDisruptionBudget minAvailable %s of %d: a drain could never evict, or nothing is kept", pdb.Spec.MinAvailable.String(), replicas)
		}
	default:
		t.Error("PodDisruptionBudget without minAvailable or maxUnavailable")
	}

	// HorizontalPodAutoscaler: scales this Deployment, never below its
	// replicas, on CPU, which the container requests.
	h := m.hpa
	if ref := h.Spec.ScaleTargetRef; ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != d.Name {
		t.Errorf("HorizontalPodAutoscaler scales %s %s %s, not the Deployment %s", ref.APIVersion, ref.Kind, ref.Name, d.Name)
	}
	if h.Spec.MinReplicas == nil || int(*h.Spec.MinReplicas) < replicas || h.Spec.MaxReplicas < *h.Spec.MinReplicas {
		t.Errorf("HorizontalPodAutoscaler %v..%d: want from the Deployment's %d up", h.Spec.MinReplicas, h.Spec.MaxReplicas, replicas)
	}
	for _, mt := range h.Spec.Metrics {
		if mt.Resource != nil {
			if _, ok := c.Resources.Requests[mt.Resource.Name]; !ok {
				t.Errorf("HorizontalPodAutoscaler scales on %s, which the container does not request", mt.Resource.Name)
			}
		}
	}
	if len(h.Spec.Metrics) == 0 {
		t.Error("HorizontalPodAutoscaler without metrics")
	}

	// ServiceMonitor: selects the Service and scrapes its metrics port.
	// Its job label is the Service's name, which the rules expect.
	sm := m.serviceMonitor
	smSel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil || smSel.Empty() || !smSel.Matches(labels.Set(s.Labels)) {
		t.Errorf("ServiceMonitor selector %v does not select the Service's labels %v", sm.Spec.Selector, s.Labels)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" {
		t.Errorf("ServiceMonitor endpoints %+v: want one, on the Service port metrics", sm.Spec.Endpoints)
	}
	if sm.Spec.JobLabel == "" && s.Name != "orderly" {
		t.Errorf("the scrape job would be %q; deploy/prometheus's rules expect job=\"orderly\"", s.Name)
	}

	// The files orderly reads and writes are where the pod has them: the
	// token from a Secret, never the ConfigMap; state_file on an emptyDir,
	// the root file system being read-only.
	dir := path.Dir(cfgFile)
	abs := func(p string) string {
		if path.IsAbs(p) {
			return p
		}
		return path.Join(dir, p)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	if tok := cfg.str(t, "admin.token_file"); tok == "" {
		t.Error("admin listens off loopback without token_file: orderly refuses to start")
	} else if vm, ok := mountFor(c, abs(tok)); !ok || !fromSecret(vols[vm.Name], vm.MountPath, abs(tok)) {
		t.Errorf("token_file %s does not come from a Secret", abs(tok))
	}
	for _, attr := range []string{"state_file", "error_log", "access_log", "shadow_log"} {
		p := cfg.str(t, attr)
		if p == "" || p == "stderr" || p == "stdout" {
			continue
		}
		if vm, ok := mountFor(c, abs(p)); !ok || vm.ReadOnly || vols[vm.Name].EmptyDir == nil {
			t.Errorf("%s %s is not on a writable emptyDir: the root file system is read-only", attr, abs(p))
		}
	}
}

// fromSecret reports whether the file at p, in volume v mounted at dir,
// is a Secret's key.
func fromSecret(v corev1.Volume, dir, p string) bool {
	rel, _ := filepath.Rel(dir, p)
	switch {
	case v.Secret != nil:
		return true
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			if src.Secret != nil && slices.ContainsFunc(src.Secret.Items, func(k corev1.KeyToPath) bool { return k.Path == rel }) {
				return true
			}
		}
	}
	return false
}

// buildOrderly builds ./cmd/orderly of the repository this module sits in.
func buildOrderly(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "orderly")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/orderly")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/orderly: %v\n%s", err, out)
	}
	return bin
}

// testToken stands in for the Secret's admin token.
const testToken = "test-token-0123456789abcdef"

// pod is the orderly container's file system, laid out in a temporary
// directory from the Deployment's mounts.
type pod struct {
	root   string
	config string        // the -config file, under root
	state  string        // the state_file, under root
	ports  map[int32]int // container port -> the loopback port standing for it
}

// layOutPod writes every mounted volume under a temporary root: the
// ConfigMap's files (as projected), a stand-in token for each Secret key,
// the backend's document root (a claim) with the directories the example
// rules name, and the emptyDirs. The configuration's absolute paths under
// a mount get the root in front, and its listeners move to free loopback
// ports.
func layOutPod(t *testing.T, m manifests) pod {
	t.Helper()
	c := orderlyContainer(t, m.deployment)
	root := t.TempDir()
	vols := map[string]corev1.Volume{}
	for _, v := range m.deployment.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	write := func(p, data string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	configMap := func(dir string, src *corev1.ConfigMapProjection) {
		if src.Name != m.configMap.Name {
			t.Fatalf("mounts ConfigMap %s; the manifests define %s", src.Name, m.configMap.Name)
		}
		if len(src.Items) == 0 {
			for k, v := range m.configMap.Data {
				write(filepath.Join(dir, k), v)
			}
		}
		for _, it := range src.Items {
			v, ok := m.configMap.Data[it.Key]
			if !ok {
				t.Fatalf("ConfigMap %s has no key %s", src.Name, it.Key)
			}
			write(filepath.Join(dir, it.Path), v)
		}
	}
	secret := func(dir, name string, items []corev1.KeyToPath) {
		if len(items) == 0 {
			t.Fatalf("Secret %s is mounted without items: name its keys, so the configuration's paths can be checked", name)
		}
		for _, it := range items {
			write(filepath.Join(dir, it.Path), testToken+"\n")
		}
	}
	for _, vm := range c.VolumeMounts {
		dir := filepath.Join(root, vm.MountPath)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		switch v := vols[vm.Name]; {
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				switch {
				case src.ConfigMap != nil:
					configMap(dir, src.ConfigMap)
				case src.Secret != nil:
					secret(dir, src.Secret.Name, src.Secret.Items)
				default:
					t.Fatalf("volume %s: a projection this test cannot lay out", vm.Name)
				}
			}
		case v.ConfigMap != nil:
			configMap(dir, &corev1.ConfigMapProjection{LocalObjectReference: v.ConfigMap.LocalObjectReference, Items: v.ConfigMap.Items})
		case v.Secret != nil:
			secret(dir, v.Secret.SecretName, v.Secret.Items)
		case v.PersistentVolumeClaim != nil:
			// The site's content, which the backend serves.
			write(filepath.Join(dir, "index.html"), "home\n")
			write(filepath.Join(dir, "admin", "index.html"), "admin\n")
		case v.EmptyDir != nil:
		default:
			t.Fatalf("volume %s: a kind this test cannot lay out", vm.Name)
		}
	}

	p := pod{root: root, config: filepath.Join(root, configPath(t, c)), ports: map[int32]int{}}
	b, err := os.ReadFile(p.config)
	if err != nil {
		t.Fatalf("the container's -config file is not in its mounts: %v", err)
	}
	src := string(b)
	mounts := slices.Clone(c.VolumeMounts)
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i].MountPath) > len(mounts[j].MountPath) })
	for _, vm := range mounts {
		src = strings.ReplaceAll(src, `"`+vm.MountPath+`/`, `"`+root+vm.MountPath+`/`)
		src = strings.ReplaceAll(src, `"`+vm.MountPath+`"`, `"`+root+vm.MountPath+`"`)
	}
	cfg := parseConfig(t, src)
	for _, attr := range []string{"listen", "metrics.listen", "admin.listen"} {
		addr := cfg.str(t, attr)
		port := listenPort(t, attr, addr)
		free := freePort(t)
		p.ports[port] = free
		src = strings.Replace(src, `"`+addr+`"`, `"127.0.0.1:`+strconv.Itoa(free)+`"`, 1)
	}
	// The httpd Service: a stand-in on loopback, so that readiness (a
	// backend answers its health check) can be reached.
	const backendURL = `"http://httpd:80"`
	if !strings.Contains(src, backendURL) {
		t.Fatalf("the configuration's backend is not %s, the httpd Service", backendURL)
	}
	httpd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "httpd\n") }))
	t.Cleanup(httpd.Close)
	src = strings.Replace(src, backendURL, `"`+httpd.URL+`"`, 1)
	// What orderly writes must land under root, not on this machine.
	for _, attr := range []string{"state_file", "error_log", "access_log", "shadow_log"} {
		if w := cfg.str(t, attr); filepath.IsAbs(w) && !strings.HasPrefix(w, root+"/") {
			t.Fatalf("%s %s is outside the pod's mounts", attr, w)
		}
	}
	p.state = cfg.str(t, "state_file")
	if p.state != "" && !filepath.IsAbs(p.state) {
		p.state = filepath.Join(filepath.Dir(p.config), p.state)
	}
	if err := os.WriteFile(p.config, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestConfigLoads: orderly loads the ConfigMap's configuration with the
// files the Deployment mounts (a path outside every mount fails here) and
// decides with the example rules.
func TestConfigLoads(t *testing.T) {
	m := load(t)
	bin := buildOrderly(t)
	p := layOutPod(t, m)
	for _, tc := range []struct{ ip, url, want string }{
		{"203.0.113.9", "http://orderly.example/", "decision: ALLOW"},
		{"192.0.2.7", "http://orderly.example/admin/", "decision: ALLOW"},
		{"203.0.113.9", "http://orderly.example/admin/", "decision: DENY 403"},
		{"192.0.2.7", "http://orderly.example/site.bak", "decision: DENY 403"},
	} {
		out, err := exec.Command(bin, "explain", "-config", p.config, "-ip", tc.ip, tc.url).CombinedOutput()
		if err != nil || !strings.Contains(string(out), tc.want+" ") {
			t.Errorf("orderly explain -ip %s %s: %v; want %q\n%s", tc.ip, tc.url, err, tc.want, out)
		}
	}
}

// TestServeAndProbe runs orderly serve with the pod's files and performs
// the Deployment's probes against it as kubelet would (httpGet: a status
// from 200 to 399 with the probe's headers; tcpSocket: a connection), then
// stops it with SIGTERM, as kubelet would, and finds state_file written on
// the emptyDir.
func TestServeAndProbe(t *testing.T) {
	m := load(t)
	bin := buildOrderly(t)
	p := layOutPod(t, m)
	c := orderlyContainer(t, m.deployment)
	var out bytes.Buffer
	cmd := exec.Command(bin, "serve", "-config", p.config)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
			return errors.New("orderly did not stop within 20 s of SIGTERM")
		}
	}
	t.Cleanup(func() { stop() })

	probe := func(pr *corev1.Probe) error {
		switch {
		case pr.HTTPGet != nil:
			cp, _ := containerPort(c, pr.HTTPGet.Port)
			req, err := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", p.ports[cp], pr.HTTPGet.Path), nil)
			if err != nil {
				return err
			}
			for _, h := range pr.HTTPGet.HTTPHeaders {
				req.Header.Add(h.Name, h.Value)
			}
			resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode < 200 || resp.StatusCode >= 400 {
				return fmt.Errorf("GET %s: %s", pr.HTTPGet.Path, resp.Status)
			}
			return nil
		case pr.TCPSocket != nil:
			cp, _ := containerPort(c, pr.TCPSocket.Port)
			conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p.ports[cp]), 2*time.Second)
			if err != nil {
				return err
			}
			return conn.Close()
		}
		return errors.New("a probe kubelet cannot run here")
	}
	probes := map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe}
	for what, pr := range probes {
		if pr == nil {
			t.Fatalf("no %s probe", what)
		}
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if err = probe(pr); err == nil {
				break
			}
		}
		if err != nil {
			t.Errorf("%s probe fails against a running orderly: %v", what, err)
		}
	}
	// The admin listener is off loopback in the pod, so it wants the token:
	// with it, reload works (the in-place reload the README describes).
	admin := p.ports[namedPort(t, c, "admin")]
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/-/reload", admin), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("POST /-/reload with the Secret's token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if err := stop(); err != nil {
		t.Errorf("orderly serve after SIGTERM: %v\n%s", err, out.String())
	}
	if p.state != "" {
		if _, err := os.Stat(p.state); err != nil {
			t.Errorf("state_file after SIGTERM: %v", err)
		}
	}
	if t.Failed() {
		t.Logf("orderly serve:\n%s", out.String())
	}
}
