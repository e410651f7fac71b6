package cloud_test

import (
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

const fileTriggersJS = `
Parse.Cloud.beforeSaveFile((req) => {
  if (req.file.name().endsWith('.exe')) { throw new Parse.Error(130, 'no programs'); }
  if (req.file.name() === 'rename.txt') { return new Parse.File('renamed.txt'); }
  req.file.addMetadata('size', String(req.fileSize));
});
Parse.Cloud.afterSaveFile(async (req) => {
  await new Parse.Object('FileLog', { event: 'saved', name: req.file.name(), url: !!req.file.url(),
    size: req.file.metadata().size || '' }).save(null, { useMasterKey: true });
});
Parse.Cloud.beforeDeleteFile((req) => {
  if (req.file.name().includes('keep')) { throw 'kept'; }
});
Parse.Cloud.afterDeleteFile(async (req) => {
  await new Parse.Object('FileLog', { event: 'deleted', name: req.file.name() }).save(null, { useMasterKey: true });
});
`

func TestFileTriggers(t *testing.T) {
	srv := startScript(t, fileTriggersJS)
	text := withHeader(servertest.Master(), "Content-Type", "text/plain")
	upload := func(name string) servertest.Response {
		return srv.Do(t, "POST", "/files/"+name, "hello", text)
	}
	if res := upload("a.exe"); res.Status != 400 || !strings.Contains(string(res.Body), `{"code":130,"error":"no programs"}`) {
		t.Fatalf("refused upload: %d %s", res.Status, res.Body)
	}
	renamed := upload("rename.txt")
	if renamed.Status != 201 || !strings.Contains(renamed.Map()["name"].(string), "renamed.txt") {
		t.Fatalf("renamed upload: %d %s", renamed.Status, renamed.Body)
	}
	kept := upload("keep.txt").Map()["name"].(string)
	plain := upload("plain.txt").Map()["name"].(string)
	run(t, srv, []scenario{
		{name: "afterSaveFile saw the stored name and metadata", method: "GET", path: `/classes/FileLog?where={"name":"` + plain + `"}`,
			headers: servertest.Master(), status: 200, has: []string{`"event":"saved"`, `"url":true`, `"size":"5"`}},
		{name: "beforeDeleteFile refuses", method: "DELETE", path: "/files/" + kept, headers: servertest.Master(), status: 400,
			has: []string{`{"code":141,"error":"kept"}`}},
		{name: "delete", method: "DELETE", path: "/files/" + plain, headers: servertest.Master(), status: 200},
		{name: "afterDeleteFile ran", method: "GET", path: `/classes/FileLog?where={"event":"deleted"}`,
			headers: servertest.Master(), status: 200, has: []string{`"name":"` + plain + `"`}},
	})
}
