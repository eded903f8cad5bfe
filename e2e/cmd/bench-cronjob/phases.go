package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/musterhq/muster/e2e/framework"
)

// mark is where a run starts in the hub's log and in the API server's latency counters.
type mark struct {
	logOffset int64
	api       latencies
}

// latencies sums the API server's request durations (seconds) and counts, by request.
type latencies map[string][2]float64

func phaseMark(ctx context.Context, hubCluster *framework.Cluster, m *framework.Muster, on bool) (mark, error) {
	if !on {
		return mark{}, nil
	}
	st, err := os.Stat(m.HubProc.Log)
	if err != nil {
		return mark{}, err
	}
	api, err := apiLatencies(ctx, hubCluster)
	return mark{logOffset: st.Size(), api: api}, err
}

// printPhases prints where a run's lag went: the API server's mean latency of the creates
// and, for the hub, per child from its log: slot to the create being sent, the create call,
// and the watch's delivery of the child to this process.
func printPhases(ctx context.Context, hubCluster *framework.Cluster, m *framework.Muster, from mark, side, ns string, seen []sighting) error {
	api, err := apiLatencies(ctx, hubCluster)
	if err != nil {
		return err
	}
	fmt.Print("    API server mean:")
	for _, k := range []string{"POST jobs", "POST jobs dry-run", "POST fleetjobs", "webhook CREATE", "LIST workloadspreads", "PATCH fleetcronjobs/status"} {
		sum, n := api[k][0]-from.api[k][0], api[k][1]-from.api[k][1]
		if n > 0 {
			fmt.Printf(" %s %.1f ms (%.0f);", k, 1000*sum/n, n)
		}
	}
	fmt.Println()
	if side != muster {
		return nil
	}
	created, err := hubCreates(m.HubProc.Log, from.logOffset, ns)
	if err != nil {
		return err
	}
	var before, call, lag, watch []time.Duration
	for _, s := range seen {
		c, ok := created[s.name]
		if !ok {
			continue
		}
		before, call, lag = append(before, c.beforeCreate), append(call, c.create), append(lag, c.lag)
		watch = append(watch, s.seen.Sub(s.slot.Add(c.lag)))
	}
	fmt.Printf("    hub, P50/P99 ms of %d children:", len(lag))
	for _, p := range []struct {
		name string
		d    []time.Duration
	}{{"slot to create sent", before}, {"create call", call}, {"slot to created", lag}, {"created to seen", watch}} {
		if len(p.d) == 0 {
			continue
		}
		slices.Sort(p.d)
		fmt.Printf(" %s %.0f/%.0f;", p.name, ms(percentile(p.d, 50)), ms(percentile(p.d, 99)))
	}
	fmt.Println()
	return nil
}

// creation is what the hub logged when it created a child.
type creation struct{ beforeCreate, create, lag time.Duration }

// hubCreates reads the hub's "created the run of a slot" lines for ns from offset on, by run.
func hubCreates(path string, offset int64, ns string) (map[string]creation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	out := map[string]creation{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg          string          `json:"msg"`
			Namespace    string          `json:"namespace"`
			Run          string          `json:"run"`
			Lag          json.RawMessage `json:"lag"`
			BeforeCreate json.RawMessage `json:"beforeCreate"`
			Create       json.RawMessage `json:"create"`
		}
		if !bytes.Contains(sc.Bytes(), []byte("created the run of a slot")) || json.Unmarshal(sc.Bytes(), &line) != nil || line.Namespace != ns {
			continue
		}
		out[line.Run] = creation{beforeCreate: duration(line.BeforeCreate), create: duration(line.Create), lag: duration(line.Lag)}
	}
	return out, sc.Err()
}

// duration reads a logged duration: seconds as a number (zap's production encoding) or a
// Go duration string.
func duration(raw json.RawMessage) time.Duration {
	var secs float64
	if json.Unmarshal(raw, &secs) == nil {
		return time.Duration(secs * float64(time.Second))
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		d, _ := time.ParseDuration(s)
		return d
	}
	return 0
}

// apiLatencies reads the hub API server's request and admission webhook durations.
func apiLatencies(ctx context.Context, hubCluster *framework.Cluster) (latencies, error) {
	families, err := framework.APIServerMetrics(ctx, hubCluster)
	if err != nil {
		return nil, err
	}
	out := latencies{}
	add := func(key string, m *dto.Metric) {
		h := m.GetHistogram()
		v := out[key]
		out[key] = [2]float64{v[0] + h.GetSampleSum(), v[1] + float64(h.GetSampleCount())}
	}
	for _, m := range families["apiserver_request_duration_seconds"].GetMetric() {
		l := labels(m)
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		if l["dry_run"] != "" {
			key += " dry-run"
		}
		add(key, m)
	}
	for _, m := range families["apiserver_admission_webhook_admission_duration_seconds"].GetMetric() {
		add("webhook "+labels(m)["operation"], m)
	}
	return out, nil
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
