package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/obroute/obroute/tiering"
)

// progress prints the events of a move: a line per step, then a bar redrawn in place on a
// terminal (rows done / total, rate, ETA), or a log line every logEvery otherwise.
type progress struct {
	w   io.Writer
	tty bool
	now func() time.Time

	step      tiering.Step
	started   time.Time
	startDone int64 // the step's count when it started (a resumed copy starts past 0)
	lastDraw  time.Time
	drawn     bool // a bar is on the current line
}

const (
	logEvery  = 5 * time.Second
	drawEvery = 100 * time.Millisecond
	barWidth  = 30
)

func newProgress(w io.Writer, tty bool) *progress {
	return &progress{w: w, tty: tty, now: time.Now}
}

// event receives one MoveEvent.
func (p *progress) event(e tiering.MoveEvent) {
	now := p.now()
	if e.Step != p.step {
		p.breakLine()
		p.step, p.started, p.startDone, p.lastDraw = e.Step, now, e.Done, time.Time{}
	}
	if e.Text != "" {
		p.breakLine()
		p.line(now, fmt.Sprintf("%-6s %s", e.Step, e.Text))
	}
	if e.Total <= 0 {
		if e.Finished && e.Unit == "" {
			p.line(now, fmt.Sprintf("%-6s done in %s", e.Step, now.Sub(p.started).Round(time.Millisecond)))
		}
		return
	}
	every := logEvery
	if p.tty {
		every = drawEvery
	}
	if !e.Finished && now.Sub(p.lastDraw) < every {
		return
	}
	p.lastDraw = now
	text := p.figures(now, e)
	if p.tty {
		fmt.Fprintf(p.w, "\r%s", text)
		p.drawn = true
		if e.Finished {
			p.breakLine()
		}
		return
	}
	p.line(now, fmt.Sprintf("%-6s %s", e.Step, text))
}

// figures is the bar or log text of a counted step: done/total, rate, ETA.
func (p *progress) figures(now time.Time, e tiering.MoveEvent) string {
	elapsed := now.Sub(p.started)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(e.Done-p.startDone) / elapsed.Seconds()
	}
	eta := "ETA -"
	switch {
	case e.Finished:
		eta = "done in " + elapsed.Round(time.Millisecond).String()
	case rate > 0:
		eta = "ETA " + (time.Duration(float64(e.Total-e.Done)/rate) * time.Second).Round(time.Second).String()
	}
	pct := float64(e.Done) / float64(e.Total)
	if pct > 1 {
		pct = 1
	}
	figures := fmt.Sprintf("%d/%d %s (%.0f%%), %.0f %s/s, %s", e.Done, e.Total, e.Unit, pct*100, rate, e.Unit, eta)
	if e.Unit == "s" { // a wait: its rate is the clock's
		figures = fmt.Sprintf("%d/%d s (%.0f%%), %s", e.Done, e.Total, pct*100, eta)
	}
	if !p.tty {
		return figures
	}
	fill := int(pct * barWidth)
	return "  [" + strings.Repeat("=", fill) + strings.Repeat(" ", barWidth-fill) + "] " + figures
}

// line writes one line, with the time in front when not on a terminal.
func (p *progress) line(now time.Time, s string) {
	if p.tty {
		fmt.Fprintln(p.w, s)
		return
	}
	fmt.Fprintf(p.w, "%s %s\n", now.Format("2006-01-02T15:04:05.000Z07:00"), s)
}

// breakLine ends a bar drawn on the current line.
func (p *progress) breakLine() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// end ends the output of a move (a bar left on its line after an error).
func (p *progress) end() { p.breakLine() }
