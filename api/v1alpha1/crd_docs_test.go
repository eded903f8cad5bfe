package v1alpha1_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

// installedCRDs lists Muster's CRDs as the API server holds them.
func installedCRDs(t *testing.T) []apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	var list apiextensionsv1.CustomResourceDefinitionList
	if err := c.List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	var ours []apiextensionsv1.CustomResourceDefinition
	for _, crd := range list.Items {
		if crd.Spec.Group == musterv1.GroupVersion.Group {
			ours = append(ours, crd)
		}
	}
	if len(ours) != 7 {
		t.Fatalf("%d muster.dev CRDs installed, want 7", len(ours))
	}
	return ours
}

// undescribed returns the paths of the properties under s that have no description.
func undescribed(s *apiextensionsv1.JSONSchemaProps, path string) []string {
	var out []string
	for name, p := range s.Properties {
		child := path + "." + name
		// The one exclusion: the root metadata, which the API server serves as ObjectMeta
		// with its own documentation (TestExplain checks it); the CRD only says it is an
		// object. Embedded templates' metadata is documented by hack/crdgen.
		if strings.TrimSpace(p.Description) == "" && child != ".metadata" {
			out = append(out, child)
		}
		out = append(out, undescribed(&p, child)...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		out = append(out, undescribed(s.Items.Schema, path+"[]")...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		out = append(out, undescribed(s.AdditionalProperties.Schema, path+"{}")...)
	}
	return out
}

func TestEveryFieldIsDescribed(t *testing.T) {
	for _, crd := range installedCRDs(t) {
		for _, v := range crd.Spec.Versions {
			missing := undescribed(v.Schema.OpenAPIV3Schema, "")
			slices.Sort(missing)
			for _, path := range missing {
				t.Errorf("%s %s: %s has no description", crd.Spec.Names.Kind, v.Name, path)
			}
			if strings.TrimSpace(v.Schema.OpenAPIV3Schema.Description) == "" {
				t.Errorf("%s %s: the kind has no description", crd.Spec.Names.Kind, v.Name)
			}
		}
	}
}

// kubeconfig writes a kubeconfig for the test's API server and returns its path.
func kubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData, Token: env.Config.BearerToken}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest"}
	cfg.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubectl is the toolchain's kubectl binary, the one the e2e suites use.
func kubectl(t *testing.T) string {
	t.Helper()
	dir, err := toolchain.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	tc, err := toolchain.Locate(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tc.Path(toolchain.Kubectl)
}

// words collapses runs of white space, so that text kubectl wrapped compares equal.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestExplain(t *testing.T) {
	bin, config := kubectl(t), kubeconfig(t)
	cases := []struct{ field, want string }{
		{"fleetjob.spec.placement", "placement chooses the member clusters and how the job is laid onto them."},
		{"fleetjob.spec.placement.mode", "Duplicate runs the whole Job on every selected cluster"},
		{"fleetjob.status.progress", `a Duplicate job on 3 clusters with completions 2 reads 0/6`},
		// Embedded core types keep their upstream documentation.
		{"fleetjob.spec.template.spec.backoffLimit", "Specifies the number of retries before marking this job failed."},
		{"fleetjob.metadata", "Standard object's metadata."},
		{"fleetjob.spec.template.spec.template.metadata.labels", "Map of string keys and values given to the objects created from the template"},
		{"fleetcronjob.spec.jobTemplate.metadata.annotations", "Unstructured key-value map given to the objects created from the template"},
		{"broadcastjob.spec.completionPolicy.type", "Never keeps it running so that nodes that become eligible later get a pod too."},
		{"broadcastjob.spec.template.spec.containers.image", "Container image name."},
		{"fleetcronjob.spec.concurrencyPolicy", "Replace deletes the running children, in every cluster, and starts the new one."},
		{"fleetcronjob.spec.broadcastJobTemplate.spec.failurePolicy.type", "Pause sets spec.paused"},
		{"workloadspread.spec.subsets.maxReplicas", "those no cap admits go to the last subset, past its cap"},
		{"membercluster.spec.taints", "taints keep new work off the cluster unless the work's placement tolerates them"},
		{"work.spec.feedbackRules.mode", "Status (default) the whole .status, truncated to the agent's size cap"},
		{"nodeslice.clusterName", "clusterName is the member cluster the nodes belong to."},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			var out []byte
			// The API server publishes a new CRD's OpenAPI a moment after it is established.
			envtest.Eventually(t, "kubectl explain "+tc.field, func() (bool, string) {
				var err error
				out, err = exec.CommandContext(t.Context(), bin, "--kubeconfig", config, "explain", tc.field).CombinedOutput()
				return err == nil, fmt.Sprintf("%v: %s", err, out)
			})
			if !strings.Contains(words(string(out)), words(tc.want)) {
				t.Errorf("kubectl explain %s does not say %q:\n%s", tc.field, tc.want, out)
			}
		})
	}
}
