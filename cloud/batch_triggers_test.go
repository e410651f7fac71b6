package cloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestBatchCreatesRunTriggersEach: the creates of a batch without
// transaction commit together, yet each runs its own beforeSave (whose
// refusal fails that item alone, whose changes reach that item's reply)
// and its own afterSave.
func TestBatchCreatesRunTriggersEach(t *testing.T) {
	reg := cloud.New(quiet, 0)
	var seen calls
	reg.BeforeSave("Card", func(_ context.Context, req *cloud.TriggerRequest) error {
		name, _ := req.Object["name"].(string)
		if name == "bad" {
			return schema.Errorf(schema.CodeValidationError, "no bad names")
		}
		req.Object["name"] = strings.ToUpper(name)
		return nil
	})
	reg.AfterSave("Card", func(_ context.Context, req *cloud.TriggerRequest) error {
		seen.add(fmt.Sprintf("afterSave:%v", req.Object["name"]))
		return nil
	})
	srv := servertest.StartCloud(t, nil, reg, nil)
	create := func(name string) map[string]any {
		return map[string]any{"method": "POST", "path": "/parse/classes/Card", "body": map[string]any{"name": name}}
	}
	res := srv.Do(t, "POST", "/batch", map[string]any{"requests": []any{create("ada"), create("bad"), create("bob")}}, servertest.App())
	if res.Status != 200 {
		t.Fatalf("batch: %d %s", res.Status, res.Body)
	}
	var items []struct {
		Success map[string]any `json:"success"`
		Error   *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(res.Body, &items); err != nil || len(items) != 3 {
		t.Fatalf("batch reply %s (%v)", res.Body, err)
	}
	if items[0].Success["name"] != "ADA" || items[2].Success["name"] != "BOB" {
		t.Errorf("the triggers' changes are not in the replies: %s", res.Body)
	}
	if items[1].Error == nil || items[1].Error.Code != schema.CodeValidationError {
		t.Errorf("refused item: %s, want code %d", res.Body, schema.CodeValidationError)
	}
	if got := seen.list(); got != "afterSave:ADA,afterSave:BOB" {
		t.Errorf("afterSave calls %q", got)
	}
	found := srv.Do(t, "GET", "/classes/Card", nil, servertest.App())
	if n := strings.Count(string(found.Body), `"objectId"`); n != 2 || !strings.Contains(string(found.Body), `"name":"BOB"`) {
		t.Errorf("stored: %s, want ADA and BOB", found.Body)
	}
}
