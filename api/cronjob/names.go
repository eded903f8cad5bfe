package cronjob

import (
	"fmt"
	"strconv"
	"time"

	"github.com/musterhq/muster/api/names"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// ChildName is the name the child for a slot gets: the cron's name and the slot in Unix
// minutes (SlotResolution). Two hub replicas firing the same slot across a failover
// create the same object, and the API server refuses the second.
func ChildName(cj *musterv1.FleetCronJob, slot time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, slotNumber(slot))
}

// slotNumber is the slot in Unix time, counted in SlotResolution units.
func slotNumber(slot time.Time) int64 { return slot.Unix() / int64(SlotResolution/time.Second) }

// AlternateChildName is the name the child for a slot gets when an object the cron does
// not control holds ChildName (anyone who may create FleetJobs in the namespace can
// guess it): the cron's name (cut to fit), the slot, and a hash of the cron's UID and the
// slot. It is as predictable to the hub as ChildName, so replicas and restarts still
// agree on one child per slot. The child's name becomes its member Jobs', so it leaves
// room for any completion index in the host names of an Indexed run's pods.
func AlternateChildName(cj *musterv1.FleetCronJob, slot time.Time) string {
	minutes := strconv.FormatInt(slotNumber(slot), 10)
	return names.Name(names.JobMaxLength, cj.Name, minutes, "fleetcronjob-run", string(cj.UID), minutes)
}

// NamedFor reports whether name is one of the two names the run of slot gets.
func NamedFor(cj *musterv1.FleetCronJob, name string, slot time.Time) bool {
	return name == ChildName(cj, slot) || name == AlternateChildName(cj, slot)
}
