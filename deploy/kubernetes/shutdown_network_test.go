package kubernetes

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"regexp"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// backendServiceFile is the backend Service the manifests assume and do
// not create (deploy/README.md, "Kubernetes").
const backendServiceFile = "testdata/httpd-service.yaml"

func backendService(t *testing.T) *corev1.Service {
	t.Helper()
	b, err := os.ReadFile(backendServiceFile)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := decode(b)
	if err != nil {
		t.Fatalf("%s: %v", backendServiceFile, err)
	}
	s, ok := obj.(*corev1.Service)
	if !ok {
		t.Fatalf("%s: a %T, want a Service", backendServiceFile, obj)
	}
	return s
}

// backendURL returns the ConfigMap's backend url.
func backendURL(t *testing.T, m manifests) *url.URL {
	t.Helper()
	c := orderlyContainer(t, m.deployment)
	cfg := parseConfig(t, m.configMap.Data[path.Base(configPath(t, c))])
	u, err := url.Parse(cfg.str(t, "backend.url"))
	if err != nil || u.Host == "" {
		t.Fatalf("orderly.hcl backend url %q: %v", cfg.str(t, "backend.url"), err)
	}
	return u
}

// networkPolicyProblems lists what keeps np from being the policy that
// lets only orderly's pods (the Deployment's) reach the backend's pods
// (those svc selects) on the port the backend URL reaches through svc.
func networkPolicyProblems(np *networkingv1.NetworkPolicy, d *appsv1.Deployment, svc *corev1.Service, backend *url.URL) []string {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	orderlyPods := labels.Set(d.Spec.Template.Labels)
	backendPods := labels.Set(svc.Spec.Selector)

	// The backend URL names svc, on one of its ports.
	host, portStr, err := net.SplitHostPort(backend.Host)
	if err != nil {
		host, portStr = backend.Host, map[string]string{"http": "80", "https": "443"}[backend.Scheme]
	}
	if host != svc.Name && host != svc.Name+"."+svc.Namespace {
		bad("the backend URL %s names host %s, not the Service %s", backend, host, svc.Name)
	}
	port, _ := strconv.Atoi(portStr)
	var target *intstr.IntOrString
	for _, p := range svc.Spec.Ports {
		if int(p.Port) == port {
			tp := p.TargetPort
			if tp.Type == intstr.Int && tp.IntVal == 0 {
				tp = intstr.FromInt32(p.Port) // targetPort defaults to port
			}
			target = &tp
		}
	}
	if target == nil {
		bad("the Service %s has no port %d, the backend URL's", svc.Name, port)
	}

	// The policy applies to the backend's pods, and only to them.
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	switch {
	case err != nil:
		bad("podSelector: %v", err)
	case len(backendPods) == 0:
		bad("the Service %s selects no pods", svc.Name)
	case sel.Empty():
		bad("podSelector is empty: it applies to every pod in the namespace, orderly's included")
	case len(np.Spec.PodSelector.MatchExpressions) > 0:
		bad("podSelector has matchExpressions: want matchLabels, a subset of the Service's selector")
	case !sel.Matches(backendPods):
		bad("podSelector %v does not select the pods the Service %s selects (%v)", np.Spec.PodSelector.MatchLabels, svc.Name, backendPods)
	case sel.Matches(orderlyPods):
		bad("podSelector %v selects orderly's pods too", np.Spec.PodSelector.MatchLabels)
	}
	if len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		bad("policyTypes %v, want [Ingress]: the backend's egress is not this policy's business", np.Spec.PolicyTypes)
	}

	// One rule: from orderly's pods in this namespace, to the port.
	if len(np.Spec.Ingress) != 1 {
		bad("%d ingress rules, want one (from orderly)", len(np.Spec.Ingress))
		return probs
	}
	rule := np.Spec.Ingress[0]
	if len(rule.From) != 1 {
		bad("ingress from %d peers, want one: orderly's pods", len(rule.From))
	}
	for _, peer := range rule.From {
		switch {
		case peer.IPBlock != nil:
			bad("ingress from ipBlock %s: pod addresses change, select orderly's pods", peer.IPBlock.CIDR)
		case peer.NamespaceSelector != nil:
			bad("ingress from namespaceSelector %v: orderly runs in the backend's namespace", peer.NamespaceSelector)
		case peer.PodSelector == nil:
			bad("an ingress peer without podSelector")
		default:
			from, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
			switch {
			case err != nil:
				bad("ingress podSelector: %v", err)
			case from.Empty():
				bad("ingress podSelector is empty: every pod in the namespace may connect")
			case !from.Matches(orderlyPods):
				bad("ingress podSelector %v does not select orderly's pods (%v)", peer.PodSelector.MatchLabels, orderlyPods)
			}
		}
	}
	if len(rule.Ports) != 1 {
		bad("ingress on %d ports, want one: the backend's", len(rule.Ports))
	}
	for _, p := range rule.Ports {
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			bad("ingress protocol %s, want TCP", *p.Protocol)
		}
		if p.EndPort != nil {
			bad("ingress on a port range up to %d, want the backend's port", *p.EndPort)
		}
		if p.Port == nil {
			bad("ingress on every port, want the backend's")
		} else if target != nil && *p.Port != *target {
			bad("ingress on port %s; the Service %s sends the backend URL's port %d to %s", p.Port.String(), svc.Name, port, target.String())
		}
	}
	return probs
}

// TestNetworkPolicy: the NetworkPolicy lets only orderly's pods reach the
// backend's pods, on the port the ConfigMap's backend URL ends up on, for
// the backend Service the README asks for (testdata/httpd-service.yaml);
// and the check finds a policy that misses.
func TestNetworkPolicy(t *testing.T) {
	m := load(t)
	svc := backendService(t)
	u := backendURL(t, m)
	for _, p := range networkPolicyProblems(m.networkPolicy, m.deployment, svc, u) {
		t.Error(p)
	}

	// Controls: each of these must be reported.
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	for name, mutate := range map[string]func(np *networkingv1.NetworkPolicy, d *appsv1.Deployment, svc *corev1.Service){
		"orderly relabelled": func(_ *networkingv1.NetworkPolicy, d *appsv1.Deployment, _ *corev1.Service) {
			d.Spec.Template.Labels = map[string]string{"app.kubernetes.io/name": "orderly-proxy"}
		},
		"backend relabelled": func(_ *networkingv1.NetworkPolicy, _ *appsv1.Deployment, s *corev1.Service) {
			s.Spec.Selector = map[string]string{"app": "apache"}
		},
		"target port moved": func(_ *networkingv1.NetworkPolicy, _ *appsv1.Deployment, s *corev1.Service) {
			s.Spec.Ports[0].TargetPort = intstr.FromInt32(8080)
		},
		"backend Service renamed": func(_ *networkingv1.NetworkPolicy, _ *appsv1.Deployment, s *corev1.Service) { s.Name = "apache" },
		"policy selects every pod": func(np *networkingv1.NetworkPolicy, _ *appsv1.Deployment, _ *corev1.Service) {
			np.Spec.PodSelector = metav1.LabelSelector{}
		},
		"from every pod": func(np *networkingv1.NetworkPolicy, _ *appsv1.Deployment, _ *corev1.Service) {
			np.Spec.Ingress[0].From[0].PodSelector = &metav1.LabelSelector{}
		},
		"from every namespace": func(np *networkingv1.NetworkPolicy, _ *appsv1.Deployment, _ *corev1.Service) {
			np.Spec.Ingress[0].From[0].NamespaceSelector = &metav1.LabelSelector{}
		},
		"an open rule": func(np *networkingv1.NetworkPolicy, _ *appsv1.Deployment, _ *corev1.Service) {
			np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{})
		},
		"every port": func(np *networkingv1.NetworkPolicy, _ *appsv1.Deployment, _ *corev1.Service) {
			np.Spec.Ingress[0].Ports[0].Port = nil
		},
		"UDP": func(np *networkingv1.NetworkPolicy, _ *appsv1.Deployment, _ *corev1.Service) {
			np.Spec.Ingress[0].Ports[0].Protocol = &udp
		},
		"another port": func(np *networkingv1.NetworkPolicy, _ *appsv1.Deployment, _ *corev1.Service) {
			p := intstr.FromInt32(443)
			np.Spec.Ingress[0].Ports[0] = networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: &p}
		},
		"egress too": func(np *networkingv1.NetworkPolicy, _ *appsv1.Deployment, _ *corev1.Service) {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		},
	} {
		np, d, s := m.networkPolicy.DeepCopy(), m.deployment.DeepCopy(), svc.DeepCopy()
		mutate(np, d, s)
		if probs := networkPolicyProblems(np, d, s, u); len(probs) == 0 {
			t.Errorf("%s: no problem found", name)
		}
	}
}

// shutdownBudget returns what a pod's termination takes at most (preStop's
// sleep plus orderly's shutdown_grace) and what kubelet allows it
// (terminationGracePeriodSeconds), from the Deployment and the ConfigMap.
func shutdownBudget(t *testing.T, m manifests) (preStop, grace, allowed time.Duration) {
	t.Helper()
	d := m.deployment
	c := orderlyContainer(t, d)
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatal("no preStop sleep: the Service would still send connections to a pod that stopped accepting them")
	}
	preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	cfg := parseConfig(t, m.configMap.Data[path.Base(configPath(t, c))])
	g := cfg.str(t, "shutdown_grace")
	if g == "" {
		t.Fatal("orderly.hcl does not set shutdown_grace: set it, so that the period it must fit in is checked against what runs")
	}
	grace, err := time.ParseDuration(g) // as cmd/orderly's durationAttr
	if err != nil || grace <= 0 {
		t.Fatalf("orderly.hcl shutdown_grace %q: want a positive duration", g)
	}
	tgps := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if tgps == nil {
		t.Fatal("no terminationGracePeriodSeconds (the default, 30 s, would be implicit)")
	}
	return preStop, grace, time.Duration(*tgps) * time.Second
}

// TestShutdownFits: kubelet's grace period, which counts from the start
// of preStop, outlasts preStop's sleep plus orderly's shutdown_grace, so
// that orderly drains and saves state_file before the SIGKILL.
func TestShutdownFits(t *testing.T) {
	m := load(t)
	preStop, grace, allowed := shutdownBudget(t, m)
	t.Logf("preStop %s + shutdown_grace %s; terminationGracePeriodSeconds %s", preStop, grace, allowed)
	if preStop <= 0 {
		t.Errorf("preStop sleeps %s", preStop)
	}
	if preStop+grace >= allowed {
		t.Errorf("preStop %s + shutdown_grace %s = %s: not under terminationGracePeriodSeconds %s, so kubelet kills orderly mid-drain", preStop, grace, preStop+grace, allowed)
	}
	// Control: the values are the ones read, so a longer shutdown_grace
	// in the ConfigMap breaks the inequality.
	long := m
	long.configMap = m.configMap.DeepCopy()
	key := path.Base(configPath(t, orderlyContainer(t, m.deployment)))
	long.configMap.Data[key] = graceAttr.ReplaceAllString(long.configMap.Data[key], `shutdown_grace = "`+allowed.String()+`"`)
	if p, g, a := shutdownBudget(t, long); p+g < a {
		t.Errorf("shutdown_grace set to %s still reads %s", allowed, g)
	}
}

var graceAttr = regexp.MustCompile(`(?m)^\s*shutdown_grace\s*=.*$`)
