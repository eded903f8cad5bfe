package toolchain

// Versions of the components the tests run. Changing one of them starts a new cache entry;
// old entries stay until the cache directory is cleaned.
const (
	KubernetesVersion = "v1.36.3"
	EtcdVersion       = "v3.6.8"
	KwokVersion       = "v0.8.0"
)

// Binary names as they appear in the assets directory.
const (
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	Kubectl               = "kubectl"
	Etcd                  = "etcd"
	Kwok                  = "kwok"
	Kwokctl               = "kwokctl"
)
