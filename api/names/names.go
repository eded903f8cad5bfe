// Package names derives the names Muster gives objects it makes for an owner (a shard's
// Work, a WorkloadSpread subset's member Job, a FleetCronJob's run under an alternate
// name) so that two owners never get the same one. Joining the owner's fields with "-"
// is not enough: FleetJob "b-c" in namespace "a" and FleetJob "c" in namespace "a-b"
// join alike, and one tenant could take the name another needs. A derived name is a
// readable head, cut to fit, and a hash of every field it stands for.
//
// The package is pure (no clients): the hub's controllers and its webhook name objects
// alike, and tests can compute the names the hub will use.
package names

import (
	"crypto/sha256"
	"encoding/base32"
	"strconv"
	"strings"
)

// MaxLength is the longest name this package makes: a DNS-1123 label, so the name is also
// a valid label value (the agent labels what it applies with its Work's name).
const MaxLength = 63

// JobMaxLength is the longest name of a Job this package names, or of an object that
// becomes one in a member: an Indexed Job's pods have the host name <job>-<index>, a
// DNS-1123 label, and any index (up to 2147483647) still fits after 52 characters.
const JobMaxLength = MaxLength - len("-2147483647")

// HashLength is the length of Hash: 16 base32 characters, 80 bits of SHA-256. A name cut
// to fit leaves the fields past the cut free to an attacker, who must then find a second
// preimage of those bits: 2^80 hashes, out of reach; two names that fit can only repeat
// when the whole hash does.
const HashLength = 16

var encoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Hash is HashLength lowercase base32 characters of the SHA-256 of tuple. Each field is
// written with its length first, so no two tuples (of any fields, of any count) hash the
// same input: ("a-b", "c") and ("a", "b-c") differ, and so do ("x") and ("x", "").
func Hash(tuple ...string) string {
	var b strings.Builder
	for _, field := range tuple {
		b.WriteString(strconv.Itoa(len(field)))
		b.WriteByte(':')
		b.WriteString(field)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return encoding.EncodeToString(sum[:])[:HashLength]
}

// Name is the name of at most maxLength characters (MaxLength or JobMaxLength; never
// fewer than HashLength) that stands for tuple: head, cut as needed, then tail, then
// Hash(tuple...), joined with "-". head and tail are only for people to read (characters
// a DNS label cannot hold become "-"); tail is kept whole when it fits, for a short field
// worth seeing such as a slot. Distinct tuples give distinct names, whatever head and
// tail say; the same tuple always gives the same name, so two hub replicas agree.
func Name(maxLength int, head, tail string, tuple ...string) string {
	hash := Hash(tuple...)
	room := min(maxLength, MaxLength) - len(hash) - 1 // before "-<hash>"
	var parts []string
	if tail = cut(sanitize(tail), room-1); tail != "" {
		room -= len(tail) + 1
	}
	if head = cut(sanitize(head), room); head != "" {
		parts = append(parts, head)
	}
	if tail != "" {
		parts = append(parts, tail)
	}
	return strings.Join(append(parts, hash), "-")
}

// ShardJob is the name of a FleetJob's shard Job in a member, in the FleetJob's namespace:
// the FleetJob's own, unique there; with a subset, one derived from both, as subsets of
// two FleetJobs (and another FleetJob's name) may join alike: "a" with subset "b-c",
// "a-b" with subset "c", FleetJob "a-b-c". A derived name leaves room for any completion
// index in the host names of an Indexed Job's pods. The hub's FleetJob controller names
// the Jobs it creates with it, and its webhook the Jobs it checks before they exist.
func ShardJob(fleetJob, subset string) string {
	if subset == "" {
		return fleetJob
	}
	return Name(JobMaxLength, fleetJob+"-"+subset, "", "fleetjob-subset-job", fleetJob, subset)
}

// sanitize lowercases s and turns every character a DNS label cannot hold (dots
// included) into "-".
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, s)
}

// cut keeps at most n bytes of s, without the dashes a cut or a field may leave at either
// end: a label starts and ends with a letter or digit.
func cut(s string, n int) string { return strings.Trim(s[:max(0, min(len(s), n))], "-") }
