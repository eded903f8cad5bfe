package app

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"
)

// tableAccept asks the API server for its Table rendering, and the plain object from
// servers (or aggregated APIs) that have none.
var tableAccept = strings.Join([]string{
	fmt.Sprintf("application/json;as=Table;v=%s;g=%s", metav1.SchemeGroupVersion.Version, metav1.GroupName),
	"application/json",
}, ",")

// tableRequest returns the request transform of get: server-side printing, as kubectl
// asks for it, when human is true; withObjects has each row carry its whole object
// rather than only its metadata.
func tableRequest(human, withObjects bool) resource.RequestTransform {
	return func(req *rest.Request) {
		if !human {
			return
		}
		req.SetHeader("Accept", tableAccept)
		include := metav1.IncludeMetadata
		if withObjects {
			include = metav1.IncludeObject
		}
		req.Param("includeObject", string(include))
	}
}

func isTable(obj runtime.Object) bool {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return gvk.Kind == "Table" && gvk.Group == metav1.GroupName
}

// decodeTable turns the server's Table, which the builder hands over as unstructured,
// into a metav1.Table whose rows hold decoded objects (the printer reads their names
// and namespaces).
func decodeTable(obj runtime.Object) (*metav1.Table, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !isTable(obj) {
		return nil, fmt.Errorf("the server sent %s where a Table was asked for", obj.GetObjectKind().GroupVersionKind())
	}
	table := &metav1.Table{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, table); err != nil {
		return nil, fmt.Errorf("decoding the server's table: %w", err)
	}
	for i := range table.Rows {
		row := &table.Rows[i]
		if row.Object.Raw == nil || row.Object.Object != nil {
			continue
		}
		o, err := runtime.Decode(unstructured.UnstructuredJSONScheme, row.Object.Raw)
		if err != nil {
			return nil, fmt.Errorf("decoding a row of the server's table: %w", err)
		}
		row.Object.Object = o
	}
	return table, nil
}
