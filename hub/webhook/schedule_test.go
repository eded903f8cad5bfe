package webhook_test

import (
	"testing"
)

// TestFleetCronJobSchedules: a schedule or time zone the controller could not run, and
// that the CRD's own rules let through, is refused at apply time on its own field, with
// the reason.
func TestFleetCronJobSchedules(t *testing.T) {
	ns := env.Namespace(t)
	tests := []struct {
		name, schedule, timeZone string
		want                     []refusal
	}{
		{name: "@every", schedule: "@every 5m",
			want: []refusal{{"spec.schedule", `Invalid value: "@every 5m": @every is not supported: use a five-field schedule such as */5 * * * *`}}},
		{name: "a day that does not exist", schedule: "0 0 30 2 *",
			want: []refusal{{"spec.schedule", `Invalid value: "0 0 30 2 *": schedule "0 0 30 2 *" never fires: no time matches it`}}},
		{name: "the hub's local zone", schedule: "0 * * * *", timeZone: "Local",
			want: []refusal{{"spec.timeZone", `Invalid value: "Local": time zone "Local" is not allowed: name an IANA zone such as Europe/Berlin, not the hub's local zone`}}},
		{name: "a zone that does not exist", schedule: "0 * * * *", timeZone: "Mars/Olympus",
			want: []refusal{{"spec.timeZone", `Invalid value: "Mars/Olympus": unknown time zone "Mars/Olympus": unknown time zone Mars/Olympus`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cj := cronJob("cron", ns, nil, nil)
			cj.Spec.Schedule = tc.schedule
			if tc.timeZone != "" {
				cj.Spec.TimeZone = ptrTo(tc.timeZone)
			}
			expectRefused(t, cj, tc.want)
		})
	}
	t.Run("February 29th in an IANA zone", func(t *testing.T) {
		cj := cronJob("leap", ns, nil, nil)
		cj.Spec.Schedule, cj.Spec.TimeZone = "0 12 29 2 *", ptrTo("Europe/Berlin")
		expectAdmitted(t, cj)
	})
}
