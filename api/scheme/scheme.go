// Package scheme is the runtime.Scheme shared by Muster's binaries: the built-in kinds and
// Muster's own.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Scheme knows the built-in kinds, CRDs (musterctl installs them) and Muster's kinds.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(musterv1.AddToScheme(Scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(Scheme))
}
