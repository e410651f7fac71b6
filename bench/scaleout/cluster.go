package main

import (
	"context"

	"github.com/quarrydata/quarry/bench/cluster"
)

type (
	database = cluster.Database
	instance = cluster.Instance
)

func createDatabase(ctx context.Context, admin string) (*database, error) {
	return cluster.CreateDatabase(ctx, admin, "quarry_scaleout")
}

// startInstance runs bin against the database, with the index the
// workloads query by.
func startInstance(bin, dir string, i int, db *database, extra []string) (*instance, error) {
	return cluster.Start(bin, dir, i, append([]string{"--appId", appID, "--masterKey", masterKey,
		"--databaseURI", db.URI, "--indexes", "Item.category", "--logLevel", "error"}, extra...))
}
