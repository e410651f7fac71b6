package transfer

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// PlainEvery is how often plain (non-terminal) progress lines are written,
// besides one line per finished collection.
const PlainEvery = 2 * time.Second

// barWidth is the width of the terminal progress bar in cells.
const barWidth = 30

// ProgressPrinter shows an import's progress: on a terminal one line
// redrawn in place with a bar, elsewhere (logs, CI) a plain line every
// PlainEvery and one per finished collection.
type ProgressPrinter struct {
	w        io.Writer
	terminal bool
	now      func() time.Time // the clock; tests fix it
	last     time.Time
	drawn    bool
}

// NewProgressPrinter writes to w; terminal selects the redrawn bar.
func NewProgressPrinter(w io.Writer, terminal bool) *ProgressPrinter {
	return &ProgressPrinter{w: w, terminal: terminal, now: time.Now}
}

// Update shows p.
func (pp *ProgressPrinter) Update(p Progress) {
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Imported) / s
	}
	frac := 1.0
	if p.TotalBytes > 0 {
		frac = min(1, float64(p.Bytes)/float64(p.TotalBytes))
	}
	if pp.terminal {
		filled := int(frac * barWidth)
		fmt.Fprintf(pp.w, "\r\x1b[K[%s%s] %3.0f%%  %s  %d objects  %.0f/s",
			strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), frac*100, p.Collection, p.Imported, rate)
		pp.drawn = true
		return
	}
	now := pp.now()
	if !p.Done && now.Sub(pp.last) < PlainEvery {
		return
	}
	pp.last = now
	if p.Collection == FilesPhase {
		fmt.Fprintf(pp.w, "import: files: %d of %d copied or checked; %d objects written\n", p.Docs, p.TotalBytes, p.Imported)
		return
	}
	state := "importing"
	if p.Done {
		state = "done"
	}
	fmt.Fprintf(pp.w, "import: %s %s (%d documents); %.0f%% of the source read, %d objects written, %.0f objects/s\n",
		p.Collection, state, p.Docs, frac*100, p.Imported, rate)
}

// Finish ends the redrawn line, if any.
func (pp *ProgressPrinter) Finish() {
	if pp.drawn {
		fmt.Fprintln(pp.w)
		pp.drawn = false
	}
}
