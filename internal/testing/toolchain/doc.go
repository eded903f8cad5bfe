// Package toolchain builds, caches and locates the Kubernetes binaries that Muster's
// integration and end-to-end tests run against: kube-apiserver, kube-controller-manager,
// kube-scheduler and kubectl, etcd, and kwok with kwokctl.
//
// Every binary is compiled from source fetched through the Go module proxy; nothing is
// downloaded from anywhere else. The results live in a per-user cache directory shared by
// every clone on the machine (see CacheDir), one entry per component and version. An entry
// is only trusted when its manifest lists a SHA-256 digest for every binary and the files
// on disk still match it, so an interrupted or corrupted build is detected and rebuilt.
package toolchain
