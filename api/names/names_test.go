package names_test

import (
	"cmp"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/musterhq/muster/api/names"
)

func TestName(t *testing.T) {
	longNS, longName := strings.Repeat("n", 63), strings.Repeat("a", 62)+"."+strings.Repeat("b", 190)
	tests := []struct {
		what string
		// max is the longest name wanted; MaxLength when zero.
		max        int
		head, tail string
		tuple      []string
		// want is the whole name when it is pinned; else wantPrefix and wantSuffix.
		want, wantPrefix, wantSuffix string
	}{
		// Pinned: hubs of two versions may run side by side during an upgrade, and a
		// FleetCronJob's alternate run name must be the same on both.
		{what: "a FleetJob's Work", head: "fleetjob-a-b-c", tuple: []string{"fleetjob", "a", "b-c"}, want: "fleetjob-a-b-c-rpeqv22iuoi6zjio"},
		{what: "its namesake in namespace a-b", head: "fleetjob-a-b-c", tuple: []string{"fleetjob", "a-b", "c"}, want: "fleetjob-a-b-c-ktgrlmqpphzgi774"},
		{what: "a run under its alternate name", max: names.JobMaxLength, head: "nightly", tail: "29012345", tuple: []string{"FleetCronJob", "uid-1", "29012345"}, want: "nightly-29012345-gk756mgxh2vjssyx"},
		{what: "the longest names are cut to 63", head: "broadcastjob-" + longNS + "-" + longName, tuple: []string{"broadcastjob", longNS, longName},
			wantPrefix: "broadcastjob-nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn-"},
		{what: "dots become dashes", head: "fleetjob-ns-v1.2", tuple: []string{"fleetjob", "ns", "v1.2"}, wantPrefix: "fleetjob-ns-v1-2-"},
		{what: "a cut before a dash leaves none", head: strings.Repeat("x", 45) + "--y", tuple: []string{"x"}, want: strings.Repeat("x", 45) + "-" + names.Hash("x")},
		{what: "the tail is kept whole past a long head", head: strings.Repeat("c", 52), tail: "29012345", tuple: []string{"c"},
			wantPrefix: strings.Repeat("c", 37) + "-29012345-"},
		{what: "a tail too long for any head is cut, the head dropped", head: "h", tail: strings.Repeat("t", 70), tuple: []string{"t"}, want: strings.Repeat("t", 45) + "-" + names.Hash("t")},
		{what: "nothing readable leaves the hash", head: "...", tail: "-", tuple: nil, want: names.Hash()},
		{what: "upper case and other characters", head: "Team_A/ä", tuple: []string{"x"}, wantPrefix: "team-a"},
		{what: "a Job name leaves room for any index", max: names.JobMaxLength, head: strings.Repeat("j", 63) + "-zone-a", tuple: []string{"j", "zone-a"},
			want: strings.Repeat("j", 35) + "-" + names.Hash("j", "zone-a")},
		{what: "a run's alternate name too", max: names.JobMaxLength, head: strings.Repeat("c", 52), tail: "29012345", tuple: []string{"c"},
			want: strings.Repeat("c", 26) + "-29012345-" + names.Hash("c")},
		{what: "no room but for the hash", max: names.HashLength, head: "h", tail: "t", tuple: []string{"x"}, want: names.Hash("x")},
	}
	for _, tc := range tests {
		t.Run(tc.what, func(t *testing.T) {
			maxLength := cmp.Or(tc.max, names.MaxLength)
			got := names.Name(maxLength, tc.head, tc.tail, tc.tuple...)
			if tc.want != "" && got != tc.want {
				t.Errorf("Name = %q, want %q", got, tc.want)
			}
			if !strings.HasPrefix(got, tc.wantPrefix) || !strings.HasSuffix(got, "-"+names.Hash(tc.tuple...)) && got != names.Hash(tc.tuple...) {
				t.Errorf("Name = %q, want %q…-%s", got, tc.wantPrefix, names.Hash(tc.tuple...))
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("Name = %q is not a DNS-1123 label: %v", got, errs)
			}
			if len(got) > maxLength {
				t.Errorf("Name = %q has %d characters, want at most %d", got, len(got), maxLength)
			}
			if again := names.Name(maxLength, tc.head, tc.tail, tc.tuple...); again != got {
				t.Errorf("Name changes between calls: %q, then %q", got, again)
			}
		})
	}
}

func TestHashSeparatesFields(t *testing.T) {
	for _, pair := range [][2][]string{
		{{"a-b", "c"}, {"a", "b-c"}},
		{{"x"}, {"x", ""}},
		{{"", "x"}, {"x", ""}},
		{{"1:a"}, {"a"}},
		{{"ab", "c"}, {"a", "bc"}},
		{{"2:ab"}, {"ab", ""}},
	} {
		if names.Hash(pair[0]...) == names.Hash(pair[1]...) {
			t.Errorf("Hash(%q) == Hash(%q)", pair[0], pair[1])
		}
	}
}

// TestNamesOfASmallUniverseAreDistinct: every tuple of up to three fields, each a string
// of up to three of the characters that make names collide when joined ("a", "-", "."),
// gets its own valid name, with the same readable head for all so only the hash tells
// them apart.
func TestNamesOfASmallUniverseAreDistinct(t *testing.T) {
	fields := []string{""}
	for n, level := 0, []string{""}; n < 3; n++ {
		var next []string
		for _, s := range level {
			for _, c := range []string{"a", "-", "."} {
				next = append(next, s+c)
			}
		}
		fields, level = append(fields, next...), next
	}
	seen := map[string][]string{}
	check := func(tuple ...string) {
		got := names.Name(names.MaxLength, "owner", "", tuple...)
		if prev, ok := seen[got]; ok {
			t.Fatalf("%q and %q both get %q", prev, tuple, got)
		}
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 || len(got) > names.MaxLength {
			t.Fatalf("%q gets %q: %v", tuple, got, errs)
		}
		seen[got] = tuple
	}
	for _, a := range fields {
		check(a)
		for _, b := range fields {
			check(a, b)
			for _, c := range fields {
				check(a, b, c)
			}
		}
	}
	if want := len(fields) + len(fields)*len(fields) + len(fields)*len(fields)*len(fields); len(seen) != want {
		t.Fatalf("%d names, want %d", len(seen), want)
	}
}

// FuzzName: any two different (namespace, name, subset) tuples get different names, and
// every name is a DNS-1123 label of at most 63 characters, whatever the fields hold.
func FuzzName(f *testing.F) {
	f.Add("a", "b-c", "", "a-b", "c", "")
	f.Add("ns", "x", "spot", "ns", "x-spot", "")
	f.Add(strings.Repeat("n", 63), strings.Repeat("m", 253), "s", strings.Repeat("n", 63), strings.Repeat("m", 253), "t")
	f.Add("ns.", ".x", "-", "ns", "-x", ".")
	f.Fuzz(func(t *testing.T, ns1, name1, sub1, ns2, name2, sub2 string) {
		n1 := names.Name(names.MaxLength, fmt.Sprintf("fleetjob-%s-%s-%s", ns1, name1, sub1), "", "fleetjob", ns1, name1, sub1)
		n2 := names.Name(names.MaxLength, fmt.Sprintf("fleetjob-%s-%s-%s", ns2, name2, sub2), "", "fleetjob", ns2, name2, sub2)
		same := ns1 == ns2 && name1 == name2 && sub1 == sub2
		if (n1 == n2) != same {
			t.Fatalf("(%q, %q, %q) → %q and (%q, %q, %q) → %q", ns1, name1, sub1, n1, ns2, name2, sub2, n2)
		}
		for _, n := range []string{n1, n2} {
			if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
				t.Fatalf("%q is not a DNS-1123 label: %v", n, errs)
			}
		}
	})
}

// A FleetJob without a subset names its Job after itself; subsets that join alike with
// their FleetJob's name get distinct names that leave room for a completion index.
func TestShardJob(t *testing.T) {
	if got := names.ShardJob("a", ""); got != "a" {
		t.Errorf("names.ShardJob(a, \"\") = %q, want a", got)
	}
	seen := map[string]bool{}
	for _, pair := range [][2]string{{"a", "b-c"}, {"a-b", "c"}, {"a-b-c", ""}} {
		got := names.ShardJob(pair[0], pair[1])
		if seen[got] || len(got) > names.JobMaxLength {
			t.Errorf("names.ShardJob(%q, %q) = %q: taken already or longer than %d", pair[0], pair[1], got, names.JobMaxLength)
		}
		seen[got] = true
	}
}
