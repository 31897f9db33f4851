package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// Timeline geometry, in SVG units.
const (
	tlWidth    = 1320
	tlLane     = 13  // height of one watcher's lane
	tlGap      = 10  // between two writes
	tlTop      = 30  // room for the axis
	tlPlotLeft = 440 // left of the plot: write and lane labels
	tlPlotEnd  = 1170
)

// labColors is how many lab colours the page's CSS has (.lab0 ... .lab7): seven labs, one each.
const labColors = 8

// lane is one watcher: a lab's informer.
type lane struct {
	lab   int // index in rep.Labs, for its colour
	name  string
	watch *analysis.Watcher
}

// timeline is the steady phase's plot being drawn: its lanes, when each received each write's
// event, and the scale of its x axis (ms from the harness's record of the write).
type timeline struct {
	rep    *analysis.Report
	lanes  []lane
	seen   [][]time.Duration // seen[w][l]: when lane l received write w's event
	ok     [][]bool          // ok[w][l]: whether it did
	lo, hi float64           // the axis, ms
	step   float64           // between two ticks, ms
	band   int               // one write's height
	height int
}

// timelineSVG draws one row per harness write and, in it, one lane per watcher with a dot where
// that watcher received the write's event, relative to the harness's record of the write.
func timelineSVG(rep *analysis.Report) template.HTML {
	t := timeline{rep: rep}
	for i, l := range rep.Labs {
		for _, tag := range l.Tags {
			t.lanes = append(t.lanes, lane{i, l.Name + " " + tag, l.Watchers[tag]})
		}
	}
	if len(rep.Writes) == 0 || len(t.lanes) == 0 {
		return `<p class="note">no harness writes, or no watchers: nothing to plot</p>`
	}
	t.measure()
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" width="%d" height="%d" viewBox="0 0 %d %d" role="img"><title>steady phase: fan-out of each write</title>`,
		tlWidth, t.height, tlWidth, t.height)
	t.axis(&b)
	for w, wr := range rep.Writes {
		t.row(&b, w, wr)
	}
	fmt.Fprintf(&b, `<line class="zero" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`, t.x(0), tlTop-8, t.x(0), t.height-4)
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// measure finds when each lane received each write's event (analysis.Watcher.Delivery) and
// scales the axis to them.
func (t *timeline) measure() {
	writes := t.rep.Writes
	t.seen, t.ok = make([][]time.Duration, len(writes)), make([][]bool, len(writes))
	for w, wr := range writes {
		t.seen[w], t.ok[w] = make([]time.Duration, len(t.lanes)), make([]bool, len(t.lanes))
		for l, ln := range t.lanes {
			if ev, found := ln.watch.Delivery(wr); found {
				t.seen[w][l], t.ok[w][l] = ev.Time.Sub(wr.Time), true
				t.lo, t.hi = math.Min(t.lo, msf(t.seen[w][l])), math.Max(t.hi, msf(t.seen[w][l]))
			}
		}
	}
	t.step = tickStep(t.hi - t.lo)
	t.lo, t.hi = math.Floor(t.lo/t.step)*t.step, math.Ceil(t.hi/t.step)*t.step
	if t.hi == t.lo {
		t.hi = t.lo + t.step
	}
	t.band = len(t.lanes)*tlLane + 6
	t.height = tlTop + len(writes)*(t.band+tlGap) + 4
}

// x is where ms falls on the plot.
func (t *timeline) x(ms float64) float64 {
	return tlPlotLeft + (ms-t.lo)/(t.hi-t.lo)*(tlPlotEnd-tlPlotLeft)
}

// axis draws the ticks, their grid lines and the column titles.
func (t *timeline) axis(b *strings.Builder) {
	for i := 0; t.lo+float64(i)*t.step <= t.hi+t.step/2; i++ {
		ms := math.Round((t.lo+float64(i)*t.step)*1000) / 1000 // no 0.30000000000000004
		if ms == 0 {
			ms = 0 // not -0
		}
		x := t.x(ms)
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><text x="%.1f" y="14" text-anchor="middle">%g ms</text>`,
			x, tlTop-8, x, t.height-4, x, ms)
	}
	fmt.Fprintf(b, `<text x="%d" y="14">write</text><text x="%d" y="14" text-anchor="end">fan-out skew</text>`, 4, tlWidth-4)
}

// row draws write w: its band, one lane per watcher, and its fan-out skew.
func (t *timeline) row(b *strings.Builder, w int, wr record.Record) {
	y := tlTop + w*(t.band+tlGap)
	fmt.Fprintf(b, `<g class="write" data-rv="%s"><rect class="band" x="0" y="%d" width="%d" height="%d"/>`, esc(wr.RV), y, tlWidth, t.band)
	fmt.Fprintf(b, `<text x="4" y="%d" font-weight="600">#%d %s</text><text x="4" y="%d">rv=%s</text>`,
		y+14, w+1, esc(wr.Event+" "+wr.Name), y+28, esc(wr.RV))
	first, last := time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	for l, ln := range t.lanes {
		ly := y + 3 + l*tlLane + tlLane/2
		fmt.Fprintf(b, `<text x="%d" y="%d" class="lab%d">%s</text>`, tlPlotLeft-150, ly+4, ln.lab%labColors, esc(ln.name))
		if !t.ok[w][l] {
			fmt.Fprintf(b, `<text class="missing" x="%d" y="%d">missing: no event with rv=%s</text>`, tlPlotLeft+4, ly+4, esc(wr.RV))
			continue
		}
		d := t.seen[w][l]
		first, last = min(first, d), max(last, d)
		fmt.Fprintf(b, `<circle class="event lab%d" data-lab="%s" cx="%.1f" cy="%d" r="4"><title>%s received %s at %+.3f ms</title></circle>`,
			ln.lab%labColors, esc(t.rep.Labs[ln.lab].Name), t.x(msf(d)), ly, esc(ln.name), esc(wr.Event+" "+wr.Name), msf(d))
	}
	skew := "—"
	if last > first {
		skew = ms(last - first)
	} else if last == first {
		skew = "0.0 ms"
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end" font-weight="600">%s</text></g>`, tlWidth-4, y+t.band/2+4, esc(skew))
}

// tickStep picks a 1-2-5 step that cuts span into at most 8 intervals.
func tickStep(span float64) float64 {
	for step := 0.01; ; step *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if span/(step*m) <= 8 {
				return step * m
			}
		}
	}
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
