package v1alpha1_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// declared are the string constants of this package's Go files: those named like a
// reason, and those of a const block documented as condition types.
func declared(t *testing.T) (reasons, conditionTypes map[string]string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	reasons, conditionTypes = map[string]string{}, map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gen, ok := d.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			types := gen.Doc != nil && strings.Contains(strings.ToLower(gen.Doc.Text()), "condition types")
			for _, spec := range gen.Specs {
				collect(spec.(*ast.ValueSpec), types, reasons, conditionTypes)
			}
		}
	}
	return reasons, conditionTypes
}

func collect(vs *ast.ValueSpec, types bool, reasons, conditionTypes map[string]string) {
	for i, id := range vs.Names {
		if i >= len(vs.Values) {
			continue
		}
		lit, ok := vs.Values[i].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			continue
		}
		value, _ := strconv.Unquote(lit.Value)
		switch {
		case strings.Contains(id.Name, "Reason"):
			reasons[id.Name] = value
		case types:
			conditionTypes[id.Name] = value
		}
	}
}

// TestReasonsAndConditionTypesAreValid: every reason and condition type the controllers
// write is one the API server admits in a status condition; a reason it refuses would
// make the controller's whole status write fail (TestStatusValidation).
func TestReasonsAndConditionTypesAreValid(t *testing.T) {
	reasons, types := declared(t)
	// The package's own reasons.go and the conditions of every kind: a glob or parse that
	// silently found nothing would pass the checks below.
	for _, name := range []string{"ReasonApplied", "WorkReasonForbidden", "BroadcastJobReasonPodFailed"} {
		if _, ok := reasons[name]; !ok {
			t.Fatalf("reason %s not found among %d reasons", name, len(reasons))
		}
	}
	for _, name := range []string{"MemberClusterAvailable", "WorkApplied", "FleetJobScheduled", "BroadcastJobNodesEligible", "FleetCronJobScheduleValid", "SubsetSchedulable"} {
		if _, ok := types[name]; !ok {
			t.Fatalf("condition type %s not found among %v", name, types)
		}
	}
	check := func(what, name string, c metav1.Condition) {
		if errs := metav1validation.ValidateCondition(c, field.NewPath("status", "conditions").Index(0)); len(errs) > 0 {
			t.Errorf("%s %s: %v", what, name, errs.ToAggregate())
		}
	}
	for name, reason := range reasons {
		check("reason", name, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.Now()})
	}
	for name, typ := range types {
		check("condition type", name, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Because", LastTransitionTime: metav1.Now()})
	}
}
