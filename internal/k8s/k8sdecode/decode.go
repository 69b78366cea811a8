// Package k8sdecode reads a rendered Job back with the Kubernetes scheme,
// strictly, for tests. It is apart from package k8s so that the dbarena
// binary does not carry the API machinery's serializers.
package k8sdecode

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Decode reads a Job manifest: it fails on anything that is not a
// batch/v1 Job the API types accept, unknown fields included.
func Decode(b []byte) (*batchv1.Job, error) {
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	obj, gvk, err := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer().Decode(b, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode job: %w", err)
	}
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return nil, fmt.Errorf("decode job: a %s, not a batch/v1 Job", gvk)
	}
	return job, nil
}
