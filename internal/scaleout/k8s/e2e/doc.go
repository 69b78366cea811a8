// Package e2e is the end-to-end check of `dbarena k8s` against a real
// Kubernetes control plane: etcd, kube-apiserver and
// kube-controller-manager built from the Go module proxy outside
// dbarena's module (scripts/k8s-e2e/build-control-plane), started on
// loopback, with a pod runner in the check standing in for the kubelets.
// Its tests carry the build tag k8se2e; `make k8s-e2e` runs them.
package e2e
