package templates

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FuzzErrors: whatever field and message the API server's cause carries, it is mapped
// onto the user's object without panic, under the template's path or the object's name,
// and the server's message is kept.
func FuzzErrors(f *testing.F) {
	f.Add("spec.template.spec.containers[0].name", "FieldValueInvalid", `Invalid value: "Bad_Name": a lowercase RFC 1123 label`)
	f.Add("metadata.name", "FieldValueInvalid", "Invalid value: \"x\": will not able to create pod")
	f.Add("template", "FieldValueRequired", "Required value")
	f.Add("", "", "")
	f.Add("specx[", "FieldValueDuplicate", "Duplicate value")
	f.Fuzz(func(t *testing.T, jobField, typ, message string) {
		template := field.NewPath("spec", "template")
		cause := metav1.StatusCause{Field: jobField, Type: metav1.CauseType(typ), Message: message}
		for _, where := range []func(string) string{
			func(s string) string { return JobField(s, template) },
			func(s string) string { return PodTemplateField(s, template) },
		} {
			errs := Errors([]metav1.StatusCause{cause}, where)
			if len(errs) != 1 {
				t.Fatalf("one cause gave %d errors", len(errs))
			}
			if f := errs[0].Field; f != "metadata.name" && !strings.HasPrefix(f, "spec.template") {
				t.Fatalf("cause on %q mapped to %q, outside the template", jobField, f)
			}
			if !strings.Contains(errs[0].Error(), strings.TrimSpace(strings.TrimPrefix(message, field.ErrorType(typ).String()+": "))) {
				t.Fatalf("message %q lost: %q", message, errs[0].Error())
			}
		}
	})
}
