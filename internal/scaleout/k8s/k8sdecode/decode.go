// Package k8sdecode reads a rendered Job (or what dbarena sends the API)
// back with the Kubernetes scheme, strictly, for tests. It is apart from
// package k8s so that tests decode with the API machinery's own
// serializers, not dbarena's code.
package k8sdecode

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Decode reads a Job manifest: it fails on anything that is not a
// batch/v1 Job the API types accept, unknown fields included.
func Decode(b []byte) (*batchv1.Job, error) {
	obj, err := Object(b)
	if err != nil {
		return nil, fmt.Errorf("decode job: %w", err)
	}
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return nil, fmt.Errorf("decode job: a %T, not a batch/v1 Job", obj)
	}
	return job, nil
}

// Object reads a batch/v1 or core/v1 object (YAML or JSON, with its
// apiVersion and kind), strictly: unknown fields are an error.
func Object(b []byte) (runtime.Object, error) {
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	obj, _, err := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer().Decode(b, nil, nil)
	return obj, err
}
