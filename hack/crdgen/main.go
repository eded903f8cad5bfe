// Command crdgen writes Muster's CRDs as `controller-gen crd:generateEmbeddedObjectMeta=true`
// does, with one difference: the metadata of embedded templates (a Job's pod template, a
// FleetCronJob's job template) documents its fields. controller-gen describes that
// metadata with a fixed, allow-listed stand-in for ObjectMeta that has no descriptions, so
// `kubectl explain fleetjob.spec.template.metadata.labels` would print nothing.
//
// Usage, from the repository root: crdgen <output dir> <package pattern>...
package main

import (
	"fmt"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"
)

const metav1Package = "k8s.io/apimachinery/pkg/apis/meta/v1"

// embeddedMetaDescriptions are ObjectMeta's own documentation, shortened to what a template
// author acts on.
var embeddedMetaDescriptions = map[string]string{
	"name":        "Name of the object created from the template. Most templates leave it empty: the controller names what it creates.",
	"namespace":   "Namespace of the object created from the template. Most templates leave it empty: the controller creates it in the namespace it belongs to.",
	"labels":      "Map of string keys and values given to the objects created from the template, for selecting and organising them (e.g. with kubectl get -l). More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels",
	"annotations": "Unstructured key-value map given to the objects created from the template, for tools and libraries to store data in; not used for selection. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations",
	"finalizers":  "Finalizers given to the objects created from the template: each must be removed, by the controller that owns it, before the object is deleted.",
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: crdgen <output dir> <package pattern>...")
		os.Exit(2)
	}
	describeEmbeddedObjectMeta()
	embedded := true
	gen := genall.Generator(crd.Generator{GenerateEmbeddedObjectMeta: &embedded})
	rt, err := genall.Generators{&gen}.ForRoots(os.Args[2:]...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loading packages:", err)
		os.Exit(1)
	}
	rt.OutputRules = genall.OutputRules{Default: genall.OutputArtifacts{Config: genall.OutputToDirectory(os.Args[1])}}
	if failed := rt.Run(); failed {
		os.Exit(1)
	}
}

// describeEmbeddedObjectMeta wraps controller-gen's ObjectMeta override so that the
// stand-in it writes carries a description on each of its properties.
func describeEmbeddedObjectMeta() {
	override := crd.ObjectMetaPackages[metav1Package]
	crd.ObjectMetaPackages[metav1Package] = func(p *crd.Parser, pkg *loader.Package) {
		override(p, pkg)
		id := crd.TypeIdent{Name: "ObjectMeta", Package: pkg}
		schema := p.Schemata[id]
		props := make(map[string]apiextensionsv1.JSONSchemaProps, len(schema.Properties))
		for name, prop := range schema.Properties {
			prop.Description = embeddedMetaDescriptions[name]
			props[name] = prop
		}
		schema.Properties = props
		p.Schemata[id] = schema
	}
}
