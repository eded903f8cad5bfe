package browser

import (
	"bytes"
	"image/color"
	"image/png"
	"testing"
)

// Colours counts the distinct colours of a PNG and, for each of targets, its pixels within
// two steps per channel of it (colour management may round a channel).
func Colours(t testing.TB, shot []byte, targets ...color.RGBA) (width, height, distinct int, counts []int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is no PNG: %v", err)
	}
	seen := map[color.RGBA]bool{}
	counts = make([]int, len(targets))
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			seen[c] = true
			for i, target := range targets {
				if near(c, target) {
					counts[i]++
				}
			}
		}
	}
	return b.Dx(), b.Dy(), len(seen), counts
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(a.R, b.R) <= 2 && d(a.G, b.G) <= 2 && d(a.B, b.B) <= 2
}
