package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// seedBatch is the objects per store commit: large enough that the commit
// (one fsync) is not the seeding's cost.
const seedBatch = 10_000

// The dataset: object i has objectId o%09d, n = i, tag t<i mod tags>,
// cat c<i mod cats>, a GeoPoint on a grid and createdAt i ms after start.
const (
	tags = 1000
	cats = 50
)

var seedStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func objectID(i int) string { return fmt.Sprintf("o%09d", i) }

// seed writes n objects into a new data file: one object through the
// service fixes the class and its field types (it keeps its own id and has
// cat "c", outside the workloads' answers), the rest go straight to the
// store in large commits, JSON written by hand (encoding/json of a map per
// object would be most of the seeding's CPU).
func seed(path string, n int) error {
	a, err := store.Open(path)
	if err != nil {
		return err
	}
	s, err := service.Open(a, service.Options{AllowClientClassCreation: true})
	if err != nil {
		a.Close()
		return err
	}
	if _, err := s.Create(service.Auth{Master: true}, "Item", map[string]any{"n": -1.0, "tag": "t", "cat": "c",
		"loc": map[string]any{"__type": "GeoPoint", "latitude": 1.0, "longitude": 2.0}}); err != nil {
		a.Close()
		return err
	}
	recs := make([]store.Record, 0, seedBatch)
	for i := range n {
		recs = append(recs, store.Record{Kind: store.KindObject, Class: "Item", Key: objectID(i), Value: itemJSON(i)})
		if len(recs) == seedBatch || i == n-1 {
			if err := a.Commit(recs); err != nil {
				a.Close()
				return err
			}
			recs = recs[:0]
			if (i+1)%1_000_000 == 0 {
				fmt.Printf("  seeded %d\n", i+1)
			}
		}
	}
	return a.Close()
}

// itemJSON is object i's JSON as encoding/json writes it (keys in order),
// so that the first read finds the stored bytes equal to its own encoding
// and keeps one copy, as for objects written through the API.
func itemJSON(i int) []byte {
	at := seedStart.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	b := make([]byte, 0, 256)
	b = append(b, `{"cat":"c`...)
	b = strconv.AppendInt(b, int64(i%cats), 10)
	b = append(b, `","createdAt":"`...)
	b = append(b, at...)
	b = append(b, `","loc":{"__type":"GeoPoint","latitude":`...)
	b = strconv.AppendFloat(b, float64(i%170)/2-42, 'f', -1, 64)
	b = append(b, `,"longitude":`...)
	b = strconv.AppendFloat(b, float64(i%350)/2-87, 'f', -1, 64)
	b = append(b, `},"n":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"objectId":"`...)
	b = append(b, objectID(i)...)
	b = append(b, `","tag":"t`...)
	b = strconv.AppendInt(b, int64(i%tags), 10)
	b = append(b, `","updatedAt":"`...)
	b = append(b, at...)
	b = append(b, `"}`...)
	return b
}
