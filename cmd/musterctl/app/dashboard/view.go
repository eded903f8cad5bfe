package dashboard

import "time"

// Fleet is everything the page shows, as of Generated.
type Fleet struct {
	Generated time.Time `json:"generated"`
	Clusters  []Cluster `json:"clusters"`
	Jobs      []Job     `json:"jobs"`
	Crons     []Cron    `json:"crons"`
}

// Cluster is one MemberCluster.
type Cluster struct {
	Name     string `json:"name"`
	Accepted bool   `json:"accepted"`
	// Health is Available, Unavailable, Unknown (no heartbeat verdict yet) or NotAccepted.
	Health string `json:"health"`
	// Message explains Health when the Available condition says why.
	Message    string   `json:"message,omitempty"`
	NodesReady int32    `json:"nodesReady"`
	NodesTotal int32    `json:"nodesTotal"`
	Version    string   `json:"version,omitempty"`
	Taints     []string `json:"taints,omitempty"`
}

// Job is a FleetJob or a BroadcastJob.
type Job struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Phase     string `json:"phase"`
	// Message is the condition a user looks at first: why it failed, why it waits.
	Message  string   `json:"message,omitempty"`
	Progress Progress `json:"progress"`
	// Clusters is the progress in each cluster the job runs in.
	Clusters []ClusterProgress `json:"clusters"`
}

// ClusterProgress is a job's shard in one cluster.
type ClusterProgress struct {
	// Cluster names the cluster, or subset@cluster for a WorkloadSpread's shard.
	Cluster  string   `json:"cluster"`
	Phase    string   `json:"phase"`
	Progress Progress `json:"progress"`
}

// Progress counts pods towards a total.
type Progress struct {
	// Done is what counts towards Total: succeeded pods for a FleetJob's completions,
	// succeeded and failed pods for a BroadcastJob's nodes.
	Done      int32 `json:"done"`
	Total     int32 `json:"total"`
	Active    int32 `json:"active"`
	Succeeded int32 `json:"succeeded"`
	Failed    int32 `json:"failed"`
	// Percent is Done of Total, 0 when the total is not known.
	Percent int32 `json:"percent"`
}

// Cron is a FleetCronJob.
type Cron struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Schedule  string `json:"schedule"`
	TimeZone  string `json:"timeZone,omitempty"`
	// Creates is the kind of job each run creates.
	Creates   string `json:"creates"`
	Suspended bool   `json:"suspended"`
	Active    int    `json:"active"`
	// LastRun and LastSuccess come from the hub's status; NextRun is computed from the
	// schedule at Fleet.Generated, nil when suspended or when the schedule is invalid.
	LastRun     *time.Time `json:"lastRun,omitempty"`
	LastSuccess *time.Time `json:"lastSuccess,omitempty"`
	NextRun     *time.Time `json:"nextRun,omitempty"`
	// Problem says why there is no next run for a schedule that does not parse.
	Problem string `json:"problem,omitempty"`
}
