-- A small Parse Server database as its PostgreSQL adapter lays it out:
-- one table per class, "_SCHEMA", and "_Join:<key>:<Class>" tables.
CREATE TABLE "_SCHEMA" ("className" varChar(120), "schema" jsonb, "isParseClass" bool, PRIMARY KEY ("className"));
INSERT INTO "_SCHEMA" VALUES
('_User', '{"className":"_User","fields":{"objectId":{"type":"String"},"createdAt":{"type":"Date"},"updatedAt":{"type":"Date"},"ACL":{"type":"ACL"},"username":{"type":"String"},"password":{"type":"String"},"email":{"type":"String"},"emailVerified":{"type":"Boolean"},"authData":{"type":"Object"},"_rperm":{"type":"Array"},"_wperm":{"type":"Array"},"_hashed_password":{"type":"String"}},"classLevelPermissions":{"find":{"*":true},"get":{"*":true},"count":{"*":true},"create":{"*":true},"update":{"*":true},"delete":{"*":true},"addField":{"*":true},"protectedFields":{"*":["email"]}},"indexes":{"_id_":{"_id":1}}}', true),
('_Session', '{"className":"_Session","fields":{"objectId":{"type":"String"},"createdAt":{"type":"Date"},"updatedAt":{"type":"Date"},"ACL":{"type":"ACL"},"user":{"type":"Pointer","targetClass":"_User"},"installationId":{"type":"String"},"sessionToken":{"type":"String"},"expiresAt":{"type":"Date"},"createdWith":{"type":"Object"},"_rperm":{"type":"Array"},"_wperm":{"type":"Array"}},"classLevelPermissions":{}}', true),
('Post', '{"className":"Post","fields":{"objectId":{"type":"String"},"createdAt":{"type":"Date"},"updatedAt":{"type":"Date"},"ACL":{"type":"ACL"},"title":{"type":"String","required":true},"author":{"type":"Pointer","targetClass":"_User"},"likes":{"type":"Relation","targetClass":"_User"},"location":{"type":"GeoPoint"},"area":{"type":"Polygon"},"published":{"type":"Date"},"meta":{"type":"Object"},"tags":{"type":"Array"},"cover":{"type":"File"},"views":{"type":"Number","defaultValue":0},"_rperm":{"type":"Array"},"_wperm":{"type":"Array"}},"classLevelPermissions":{"find":{"*":true},"get":{"*":true},"count":{"*":true},"create":{"role:Editors":true},"update":{"role:Editors":true},"delete":{"role:Editors":true},"addField":{},"protectedFields":{}},"indexes":{"_id_":{"_id":1},"title_1":{"title":1}}}', true);

CREATE TABLE "_User" ("objectId" varChar(120), "createdAt" timestamp with time zone, "updatedAt" timestamp with time zone,
  "_rperm" text[], "_wperm" text[], "username" text, "email" text, "emailVerified" boolean, "_hashed_password" text,
  "_email_verify_token" text, "_auth_data_facebook" jsonb, PRIMARY KEY ("objectId"));
INSERT INTO "_User" VALUES
('aliceUser1', '2019-03-04 10:11:12.345+00', '2021-05-06 07:08:09.01+00', '{*,aliceUser1}', '{aliceUser1}', 'alice', 'Alice@Example.com', true,
 '$2b$10$NOWksge4AFL8..kJmaAjtOUrH1wpVxtWtFd3vcIxAxQNzV5eXQMv6', 'e0a1b2c3', NULL),
('bobUser002', '2019-03-04 10:11:12.345+00', '2019-03-04 10:11:12.345+00', '{*,bobUser002}', '{bobUser002}', 'Bob', NULL, NULL,
 '$2a$10$IssJ5Ut8mAhz7re1RLwXhO0gq/iVQKa8r1WH7HzJ.iJiwDUGrLFlq', NULL, '{"id":"1000123","access_token":"fb-token"}');

CREATE TABLE "_Session" ("objectId" varChar(120), "createdAt" timestamp with time zone, "updatedAt" timestamp with time zone,
  "_rperm" text[], "_wperm" text[], "user" varChar(120), "installationId" text, "sessionToken" text, "expiresAt" timestamp with time zone,
  "createdWith" jsonb, PRIMARY KEY ("objectId"));
INSERT INTO "_Session" VALUES ('sessAlice1', '2021-05-06 07:08:09.01+00', '2021-05-06 07:08:09.01+00', '{aliceUser1}', '{aliceUser1}',
  'aliceUser1', 'inst-1', 'r:pgsessiontoken0001', '2035-01-01 00:00:00+00', '{"action":"login","authProvider":"password"}');

CREATE TABLE "Post" ("objectId" varChar(120), "createdAt" timestamp with time zone, "updatedAt" timestamp with time zone,
  "_rperm" text[], "_wperm" text[], "title" text, "author" varChar(120), "location" point, "area" polygon,
  "published" timestamp with time zone, "meta" jsonb, "tags" jsonb, "cover" text, "views" double precision, PRIMARY KEY ("objectId"));
INSERT INTO "Post" VALUES
('postHello1', '2020-02-02 02:02:02+00', '2020-02-03 02:02:02+00', '{*}', '{role:Editors,aliceUser1}', 'Hello', 'aliceUser1',
 '(13.4,52.5)', '((13,52),(14,52),(14,53),(13,52))', '2020-02-02 02:02:02+00',
 '{"seen":{"__type":"Date","iso":"2020-01-01T00:00:00.000Z"},"n":7}', '["go","parse"]', 'tfss-3c5a1e2d-cover.png', 42),
('postOpen02', '2020-03-03 03:03:03+00', '2020-03-03 03:03:03+00', NULL, NULL, 'Open', NULL, NULL, NULL, NULL, NULL, NULL, NULL, 7.5);

CREATE TABLE "_Join:likes:Post" ("relatedId" varChar(120), "owningId" varChar(120), PRIMARY KEY ("relatedId", "owningId"));
INSERT INTO "_Join:likes:Post" VALUES ('bobUser002', 'postHello1'), ('aliceUser1', 'postHello1');

CREATE TABLE "_GlobalConfig" ("objectId" varChar(120), "params" jsonb, "masterKeyOnly" jsonb, PRIMARY KEY ("objectId"));
INSERT INTO "_GlobalConfig" VALUES ('1', '{"welcome":"Hello from Parse"}', '{}');

-- Not Parse's: left alone by an import.
CREATE TABLE app_audit (id serial PRIMARY KEY, note text);
INSERT INTO app_audit (note) VALUES ('kept out of Quarry');
