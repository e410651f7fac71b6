package installations

import (
	"reflect"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// TestDecideInstallation: the deduplication rules as a pure function of
// what a save says and the installations found.
func TestDecideInstallation(t *testing.T) {
	inst := func(id, iid, token string) schema.Object {
		o := schema.Object{"objectId": id, "deviceType": "ios"}
		if iid != "" {
			o["installationId"] = iid
		}
		if token != "" {
			o["deviceToken"] = token
		}
		return o
	}
	for _, tc := range []struct {
		name  string
		in    installIdentity
		found []schema.Object
		want  installationSave
		code  int
	}{
		{name: "new installation", in: installIdentity{iid: "a", iidBody: "a", deviceType: "ios"}},
		{name: "create without deviceType", in: installIdentity{iid: "a", iidBody: "a"}, code: schema.CodeMissingRequiredField},
		{name: "create finds its installationId", in: installIdentity{iid: "a", iidBody: "a"},
			found: []schema.Object{inst("I1", "a", "")}, want: installationSave{target: "I1"}},
		{name: "token alone adopts its one holder", in: installIdentity{token: "t", deviceType: "ios"},
			found: []schema.Object{inst("I1", "x", "t")}, want: installationSave{target: "I1"}},
		{name: "token held by several, no installationId", in: installIdentity{token: "t", deviceType: "ios"},
			found: []schema.Object{inst("I1", "x", "t"), inst("I2", "y", "t")}, code: schema.CodeInvalidInstallationID},
		{name: "token moves to a new installation", in: installIdentity{iid: "n", iidBody: "n", token: "t", deviceType: "ios"},
			found: []schema.Object{inst("I1", "x", "t"), inst("I2", "y", "t")}, want: installationSave{stale: []string{"I1", "I2"}}},
		{name: "token taken over by a known installation", in: installIdentity{iid: "a", iidBody: "a", token: "t"},
			found: []schema.Object{inst("I1", "a", "old"), inst("I2", "y", "t")}, want: installationSave{target: "I1", stale: []string{"I2"}}},
		{name: "merge into a pre-installationId holder", in: installIdentity{iid: "a", iidBody: "a", token: "t"},
			found: []schema.Object{inst("I1", "a", ""), inst("I2", "", "t")}, want: installationSave{target: "I2", stale: []string{"I1"}}},
		{name: "other appIdentifier keeps its token", in: installIdentity{iid: "n", iidBody: "n", token: "t", deviceType: "ios", appID: "app1"},
			found: []schema.Object{inst("I1", "x", "t"), {"objectId": "I2", "installationId": "y", "deviceToken": "t", "appIdentifier": "app2"}},
			want:  installationSave{}},
		{name: "update of a missing installation", in: installIdentity{objectID: "I9", iidBody: "a", iid: "a"}, code: schema.CodeObjectNotFound},
		{name: "update may not change installationId", in: installIdentity{objectID: "I1", iidBody: "b", iid: "b"},
			found: []schema.Object{inst("I1", "a", "")}, code: schema.CodeChangedImmutableField},
		{name: "update may not change deviceType", in: installIdentity{objectID: "I1", deviceType: "android"},
			found: []schema.Object{inst("I1", "a", "")}, code: schema.CodeChangedImmutableField},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decideInstallation(tc.in, tc.found)
			if tc.code != 0 {
				if pe, ok := schema.AsError(err); !ok || pe.Code != tc.code {
					t.Fatalf("error %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.target != tc.want.target || !reflect.DeepEqual(got.stale, tc.want.stale) {
				t.Errorf("decision %+v, want %+v", got, tc.want)
			}
		})
	}
}
