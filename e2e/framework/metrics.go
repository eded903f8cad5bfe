package framework

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape fetches a Prometheus text endpoint over HTTP, as Prometheus would, and returns
// its metric families by name.
func Scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing the metrics of %s: %w", url, err)
	}
	return families, nil
}

// APIWrite is one series of an API server's apiserver_request_total for a write verb.
type APIWrite struct {
	Group, Resource, Subresource, Verb string
	Count                              float64
}

// APIWrites reads a cluster's API server metrics and returns the write requests (POST,
// PUT, PATCH, DELETE, DELETECOLLECTION) it has served, one entry per series; benchmarks
// count a controller's writes as the difference of two readings.
func APIWrites(ctx context.Context, c *Cluster) ([]APIWrite, error) {
	families, err := APIServerMetrics(ctx, c)
	if err != nil {
		return nil, err
	}
	family := families["apiserver_request_total"]
	if family == nil {
		return nil, fmt.Errorf("the API server of %s exports no apiserver_request_total", c.Name)
	}
	var out []APIWrite
	for _, m := range family.GetMetric() {
		w := APIWrite{Count: m.GetCounter().GetValue()}
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "group":
				w.Group = l.GetValue()
			case "resource":
				w.Resource = l.GetValue()
			case "subresource":
				w.Subresource = l.GetValue()
			case "verb":
				w.Verb = l.GetValue()
			}
		}
		switch w.Verb {
		case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION":
			out = append(out, w)
		}
	}
	return out, nil
}

// APIServerMetrics reads a cluster's API server metrics, by family name.
func APIServerMetrics(ctx context.Context, c *Cluster) (map[string]*dto.MetricFamily, error) {
	raw, err := c.Clientset.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server metrics of %s: %w", c.Name, err)
	}
	return parseMetrics(raw, "the API server metrics of "+c.Name)
}

// PodMetrics reads the metrics a pod of c serves on port, through the API server's pod
// proxy, by family name.
func PodMetrics(ctx context.Context, c *Cluster, namespace, pod string, port int) (map[string]*dto.MetricFamily, error) {
	raw, err := c.Clientset.CoreV1().RESTClient().Get().
		AbsPath("/api/v1/namespaces", namespace, "pods", fmt.Sprintf("%s:%d", pod, port), "proxy/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the metrics of pod %s/%s in %s: %w", namespace, pod, c.Name, err)
	}
	return parseMetrics(raw, fmt.Sprintf("the metrics of pod %s/%s", namespace, pod))
}

func parseMetrics(raw []byte, what string) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", what, err)
	}
	return families, nil
}
