// Package charts holds Muster's Helm charts, muster-hub and muster-agent, and renders them
// with Helm's own engine. They are the one source of what Muster installs: `helm install`
// reads the directories, and musterctl init, join and upgrade render the copies embedded
// here, so that the two ways of installing cannot drift apart.
package charts

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The charts, by name.
const (
	Hub   = "muster-hub"
	Agent = "muster-agent"
)

// files holds both charts; all: keeps the templates' partials (_helpers.tpl).
//
//go:embed all:muster-hub all:muster-agent
var files embed.FS

// Object is one rendered object and the template it came from (templates/deployment.yaml).
type Object struct {
	Template string
	*unstructured.Unstructured
}

// Objects are a chart's rendered objects.
type Objects []Object

// Unstructured returns the objects alone, in order.
func (objs Objects) Unstructured() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.Unstructured
	}
	return out
}

// From returns the objects made by the named templates, in order.
func (objs Objects) From(templates ...string) Objects {
	var out Objects
	for _, o := range objs {
		for _, t := range templates {
			if o.Template == t {
				out = append(out, o)
			}
		}
	}
	return out
}

// Except returns the objects made by any template but the named ones, in order.
func (objs Objects) Except(templates ...string) Objects {
	var out Objects
	for _, o := range objs {
		if len(Objects{o}.From(templates...)) == 0 {
			out = append(out, o)
		}
	}
	return out
}

// Render renders the named chart with values over its values.yaml as `helm install` would
// for a first release named like the chart, and returns the objects in the order Helm
// installs them (by kind: namespaces, CRDs, RBAC, ..., workloads).
func Render(name string, values map[string]any) (Objects, error) {
	chrt, err := load(name)
	if err != nil {
		return nil, err
	}
	top, err := chartutil.ToRenderValues(chrt, values, common.ReleaseOptions{Name: name, Namespace: "default", Revision: 1, IsInstall: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("chart %s: values: %w", name, err)
	}
	rendered, err := engine.Render(chrt, top)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	manifests := map[string]string{}
	for file, text := range rendered {
		if path.Ext(file) == ".yaml" {
			manifests[file] = text
		}
	}
	hooks, sorted, err := releaseutil.SortManifests(manifests, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	if len(hooks) > 0 {
		return nil, fmt.Errorf("chart %s has hooks, which musterctl does not run", name)
	}
	var objs Objects
	for _, m := range sorted {
		u, err := decode(m.Content)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", name, m.Name, err)
		}
		if u != nil {
			objs = append(objs, Object{Template: strings.TrimPrefix(m.Name, name+"/"), Unstructured: u})
		}
	}
	return objs, nil
}

// load reads the embedded chart as Helm's loader reads a directory.
func load(name string) (*chartv2.Chart, error) {
	var buffered []*archive.BufferedFile
	err := fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		buffered = append(buffered, &archive.BufferedFile{Name: strings.TrimPrefix(p, name+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	chrt, err := loader.LoadFiles(buffered)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	return chrt, nil
}

// decode reads the one object of a manifest, with integers as int64 as the API machinery
// decodes them; nil for a document with none (a template whose condition left it empty).
func decode(manifest string) (*unstructured.Unstructured, error) {
	raw, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return u, nil
}
