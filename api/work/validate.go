// Package work holds the rules a Work must meet beyond its CRD schema, checked by the
// hub's admission webhook so that no Work can make an agent loop.
package work

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Validate returns what is wrong with w that the CRD schema cannot express; an empty list
// means the agent can apply it.
func Validate(w *musterv1.Work) field.ErrorList {
	return nil
}
