package work

// Label on a member object names the Work (in the cluster's hub namespace) it came from:
// the agent's work sync maps watch events back to the Work through it, and its event relay
// finds the Work an event's object belongs to.
const Label = "muster.dev/work"
