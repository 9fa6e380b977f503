package kubernetes

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// composeFile is deploy/compose.yaml, whose orderly image is the same
// variable's.
const composeFile = "../compose.yaml"

// composeImage matches compose.yaml's orderly image: the variable and its
// default.
var composeImage = regexp.MustCompile(`^\$\{ORDERLY_IMAGE:-([^}]+)\}$`)

// readKustomization decodes kustomization.yaml strictly into Kustomize's
// own type.
func readKustomization(t *testing.T) types.Kustomization {
	t.Helper()
	b, err := os.ReadFile(kustomizationFile)
	if err != nil {
		t.Fatal(err)
	}
	var k types.Kustomization
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatalf("%s: %v", kustomizationFile, err)
	}
	if k.APIVersion != types.KustomizationVersion || k.Kind != types.KustomizationKind {
		t.Fatalf("%s: %s %s, want %s %s", kustomizationFile, k.APIVersion, k.Kind, types.KustomizationVersion, types.KustomizationKind)
	}
	return k
}

// render builds the base as kubectl apply -k does, with Kustomize's API.
func render(t *testing.T) []byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), ".")
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	out, err := rm.AsYaml()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	return out
}

// imageOf returns the image kustomization's images: entry gives name, and
// whether there is one.
func imageOf(k types.Kustomization, name string) (string, bool) {
	for _, im := range k.Images {
		if im.Name != name {
			continue
		}
		ref := name
		if im.NewName != "" {
			ref = im.NewName
		}
		switch {
		case im.Digest != "":
			ref += "@" + im.Digest
		case im.NewTag != "":
			ref += ":" + im.NewTag
		}
		return ref, true
	}
	return "", false
}

// imageName strips the tag or digest off an image reference (the
// registry's port stays).
func imageName(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// TestKustomizationResources: the base lists every manifest in this
// directory, once, and nothing else; it changes nothing but the image.
func TestKustomizationResources(t *testing.T) {
	k := readKustomization(t)
	files := manifestFiles(t)
	res := slices.Clone(k.Resources)
	slices.Sort(res)
	if !slices.Equal(res, files) {
		t.Errorf("%s resources %q, want every manifest here: %q", kustomizationFile, k.Resources, files)
	}
	if len(k.Images) != 1 {
		t.Errorf("%s images %+v: want one entry, orderly's", kustomizationFile, k.Images)
	}
	// Anything that rewrites names, labels or data would make the objects
	// kubectl applies differ from the files these tests check:
	// TestKustomizeBuild would see it, but say it here plainly.
	if k.NamePrefix != "" || k.NameSuffix != "" || k.Namespace != "" || len(k.Labels) > 0 || len(k.CommonLabels) > 0 ||
		len(k.CommonAnnotations) > 0 || len(k.Patches) > 0 || len(k.ConfigMapGenerator) > 0 || len(k.SecretGenerator) > 0 || len(k.Replacements) > 0 {
		t.Errorf("%s does more than list resources and set the image: leave that to overlays", kustomizationFile)
	}
}

// TestKustomizeBuild renders the base and decodes the result strictly:
// the same objects as the files, but for the orderly container's image,
// which is the kustomization's.
func TestKustomizeBuild(t *testing.T) {
	k := readKustomization(t)
	files := load(t)
	built := decodeAll(t, stream{"kustomize build", render(t)})

	d := files.deployment
	c := orderlyContainer(t, d)
	want, ok := imageOf(k, imageName(c.Image))
	if !ok {
		t.Fatalf("%s has no images: entry for the Deployment's image %s", kustomizationFile, imageName(c.Image))
	}
	if got := orderlyContainer(t, built.deployment).Image; got != want {
		t.Errorf("rendered image %s, want %s", got, want)
	}
	c.Image = want
	for _, pair := range []struct {
		kind        string
		file, built any
	}{
		{"Deployment", files.deployment, built.deployment},
		{"Service", files.service, built.service},
		{"ConfigMap", files.configMap, built.configMap},
		{"PodDisruptionBudget", files.pdb, built.pdb},
		{"HorizontalPodAutoscaler", files.hpa, built.hpa},
		{"ServiceMonitor", files.serviceMonitor, built.serviceMonitor},
		{"NetworkPolicy", files.networkPolicy, built.networkPolicy},
	} {
		if !equality.Semantic.DeepEqual(pair.file, pair.built) {
			fb, _ := yaml.Marshal(pair.file)
			bb, _ := yaml.Marshal(pair.built)
			t.Errorf("kustomize build changes the %s:\nfile:\n%s\nbuilt:\n%s", pair.kind, fb, bb)
		}
	}
}

// TestImageDefault: compose.yaml and the Kubernetes manifests run the same
// image by default, named in one variable each: compose's ORDERLY_IMAGE
// and the kustomization's images: entry.
func TestImageDefault(t *testing.T) {
	b, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image string `json:"image"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	m := composeImage.FindStringSubmatch(compose.Services["orderly"].Image)
	if m == nil {
		t.Fatalf("%s: orderly's image %q, want ${ORDERLY_IMAGE:-<default>}", composeFile, compose.Services["orderly"].Image)
	}
	def := m[1]

	k := readKustomization(t)
	d := load(t).deployment
	file := orderlyContainer(t, d).Image
	kust, ok := imageOf(k, imageName(file))
	if !ok {
		t.Fatalf("%s has no images: entry for the Deployment's image %s", kustomizationFile, imageName(file))
	}
	built := orderlyContainer(t, decodeAll(t, stream{"kustomize build", render(t)}).deployment).Image
	for what, got := range map[string]string{
		"deployment.yaml":             file,
		kustomizationFile + " images": kust,
		"kustomize build":             built,
	} {
		if got != def {
			t.Errorf("%s: image %s; compose.yaml's default is %s", what, got, def)
		}
	}
	// The image is named nowhere else among the manifests.
	for _, f := range manifestFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "image: "); f != "deployment.yaml" && n > 0 || f == "deployment.yaml" && n != 1 {
			t.Errorf("%s names an image %d times", f, n)
		}
	}
}

func TestImageName(t *testing.T) {
	for ref, want := range map[string]string{
		"orderly":                              "orderly",
		"orderly:latest":                       "orderly",
		"registry.example.com:5000/orderly":    "registry.example.com:5000/orderly",
		"registry.example.com:5000/orderly:v1": "registry.example.com:5000/orderly",
		"orderly@sha256:0123":                  "orderly",
	} {
		if got := imageName(ref); got != want {
			t.Errorf("imageName(%s) = %s, want %s", ref, got, want)
		}
	}
}
