package graphql

// fixedSDL is the part of the schema that does not depend on the classes:
// scalars, the Relay and ParseObject interfaces, ACL and geo types, where
// inputs per value type, users, cloud code and schema management.
const fixedSDL = `"""An ISO 8601 date-time in UTC ("2024-01-31T12:00:00.000Z")."""
scalar Date
"""Any JSON object."""
scalar Object
"""Any JSON value."""
scalar Any
"""Base64-encoded bytes."""
scalar Bytes
"""A file already uploaded: its name, or {name, url}."""
scalar File

"""Resolves a custom field with the cloud function named to (the field's name by default), its arguments as params."""
directive @resolve(to: String) on FIELD_DEFINITION
"""Resolves a custom field with a fixed value."""
directive @mock(with: Any!) on FIELD_DEFINITION

interface Node {
  id: ID!
}

interface ParseObject {
  id: ID!
  objectId: ID!
  createdAt: Date!
  updatedAt: Date!
  ACL: ACL!
}

type PageInfo {
  hasPreviousPage: Boolean!
  hasNextPage: Boolean!
  startCursor: String
  endCursor: String
}

type Element {
  value: Any!
}

type ACL {
  users: [UserACL!]
  roles: [RoleACL!]
  public: PublicACL
}

type UserACL {
  userId: ID!
  read: Boolean!
  write: Boolean!
}

type RoleACL {
  roleName: ID!
  read: Boolean!
  write: Boolean!
}

type PublicACL {
  read: Boolean
  write: Boolean
}

input ACLInput {
  users: [UserACLInput!]
  roles: [RoleACLInput!]
  public: PublicACLInput
}

input UserACLInput {
  userId: ID!
  read: Boolean!
  write: Boolean!
}

input RoleACLInput {
  roleName: String!
  read: Boolean!
  write: Boolean!
}

input PublicACLInput {
  read: Boolean!
  write: Boolean!
}

type GeoPoint {
  latitude: Float!
  longitude: Float!
}

input GeoPointInput {
  latitude: Float!
  longitude: Float!
}

type FileInfo {
  name: String!
  url: String!
}

"""A file part of a multipart request (the GraphQL multipart request spec)."""
scalar Upload

input FileInput {
  file: File
  upload: Upload
}

input CreateFileInput {
  upload: Upload!
  clientMutationId: String
}

type CreateFilePayload {
  fileInfo: FileInfo!
  clientMutationId: String
}

enum ReadPreference {
  PRIMARY
  PRIMARY_PREFERRED
  SECONDARY
  SECONDARY_PREFERRED
  NEAREST
}

input ReadOptionsInput {
  readPreference: ReadPreference
  includeReadPreference: ReadPreference
  subqueryReadPreference: ReadPreference
}

input SubqueryInput {
  className: String!
  where: Object!
}

input SelectInput {
  query: SubqueryInput!
  key: String!
}

input SearchInput {
  term: String!
  language: String
  caseSensitive: Boolean
  diacriticSensitive: Boolean
}

input TextInput {
  search: SearchInput!
}

input IdWhereInput {
  equalTo: ID
  notEqualTo: ID
  lessThan: ID
  lessThanOrEqualTo: ID
  greaterThan: ID
  greaterThanOrEqualTo: ID
  in: [ID]
  notIn: [ID]
  exists: Boolean
  inQueryKey: SelectInput
  notInQueryKey: SelectInput
}

input StringWhereInput {
  equalTo: String
  notEqualTo: String
  lessThan: String
  lessThanOrEqualTo: String
  greaterThan: String
  greaterThanOrEqualTo: String
  in: [String]
  notIn: [String]
  exists: Boolean
  matchesRegex: String
  options: String
  text: TextInput
  inQueryKey: SelectInput
  notInQueryKey: SelectInput
}

input NumberWhereInput {
  equalTo: Float
  notEqualTo: Float
  lessThan: Float
  lessThanOrEqualTo: Float
  greaterThan: Float
  greaterThanOrEqualTo: Float
  in: [Float]
  notIn: [Float]
  exists: Boolean
  inQueryKey: SelectInput
  notInQueryKey: SelectInput
}

input BooleanWhereInput {
  equalTo: Boolean
  notEqualTo: Boolean
  exists: Boolean
  inQueryKey: SelectInput
  notInQueryKey: SelectInput
}

input ArrayWhereInput {
  equalTo: Any
  notEqualTo: Any
  lessThan: Any
  lessThanOrEqualTo: Any
  greaterThan: Any
  greaterThanOrEqualTo: Any
  in: [Any]
  notIn: [Any]
  exists: Boolean
  containedBy: [Any]
  contains: [Any]
  inQueryKey: SelectInput
  notInQueryKey: SelectInput
}

input KeyValueInput {
  key: String!
  value: Any!
}

input ObjectWhereInput {
  equalTo: KeyValueInput
  notEqualTo: KeyValueInput
  in: [KeyValueInput]
  notIn: [KeyValueInput]
  lessThan: KeyValueInput
  lessThanOrEqualTo: KeyValueInput
  greaterThan: KeyValueInput
  greaterThanOrEqualTo: KeyValueInput
  exists: Boolean
  inQueryKey: SelectInput
  notInQueryKey: SelectInput
}

input DateWhereInput {
  equalTo: Date
  notEqualTo: Date
  lessThan: Date
  lessThanOrEqualTo: Date
  greaterThan: Date
  greaterThanOrEqualTo: Date
  in: [Date]
  notIn: [Date]
  exists: Boolean
  inQueryKey: SelectInput
  notInQueryKey: SelectInput
}

input BytesWhereInput {
  equalTo: Bytes
  notEqualTo: Bytes
  lessThan: Bytes
  lessThanOrEqualTo: Bytes
  greaterThan: Bytes
  greaterThanOrEqualTo: Bytes
  in: [Bytes]
  notIn: [Bytes]
  exists: Boolean
  inQueryKey: SelectInput
  notInQueryKey: SelectInput
}

input FileWhereInput {
  equalTo: File
  notEqualTo: File
  lessThan: File
  lessThanOrEqualTo: File
  greaterThan: File
  greaterThanOrEqualTo: File
  in: [File]
  notIn: [File]
  exists: Boolean
  matchesRegex: String
  options: String
  inQueryKey: SelectInput
  notInQueryKey: SelectInput
}

input BoxInput {
  bottomLeft: GeoPointInput!
  upperRight: GeoPointInput!
}

input WithinInput {
  box: BoxInput!
}

input CenterSphereInput {
  center: GeoPointInput!
  distance: Float!
}

input GeoWithinInput {
  polygon: [GeoPointInput!]
  centerSphere: CenterSphereInput
}

input GeoIntersectsInput {
  point: GeoPointInput
}

input GeoPointWhereInput {
  exists: Boolean
  nearSphere: GeoPointInput
  maxDistance: Float
  maxDistanceInRadians: Float
  maxDistanceInMiles: Float
  maxDistanceInKilometers: Float
  within: WithinInput
  geoWithin: GeoWithinInput
}

input PolygonWhereInput {
  exists: Boolean
  geoIntersects: GeoIntersectsInput
}

type Viewer {
  sessionToken: String!
  user: User!
}

input SignUpInput {
  fields: CreateUserFieldsInput
  clientMutationId: String
}

type SignUpPayload {
  viewer: Viewer!
  clientMutationId: String
}

input LogInInput {
  username: String!
  password: String!
  authData: Object
  clientMutationId: String
}

type LogInPayload {
  viewer: Viewer!
  clientMutationId: String
}

input LogInWithInput {
  authData: Object!
  fields: UserLoginWithInput
  clientMutationId: String
}

type LogInWithPayload {
  viewer: Viewer!
  clientMutationId: String
}

input LogOutInput {
  clientMutationId: String
}

type LogOutPayload {
  ok: Boolean!
  clientMutationId: String
}

input ResetPasswordInput {
  email: String!
  clientMutationId: String
}

type ResetPasswordPayload {
  ok: Boolean!
  clientMutationId: String
}

input ConfirmResetPasswordInput {
  username: String!
  password: String!
  token: String!
  clientMutationId: String
}

type ConfirmResetPasswordPayload {
  ok: Boolean!
  clientMutationId: String
}

input SendVerificationEmailInput {
  email: String!
  clientMutationId: String
}

type SendVerificationEmailPayload {
  ok: Boolean!
  clientMutationId: String
}

input ChallengeInput {
  username: String
  password: String
  authData: Object
  challengeData: Object
  clientMutationId: String
}

type ChallengePayload {
  challengeData: Object
  clientMutationId: String
}

type CallCloudCodePayload {
  result: Any
  clientMutationId: String
}

interface SchemaField {
  name: String!
}

type SchemaStringField implements SchemaField { name: String! }
type SchemaNumberField implements SchemaField { name: String! }
type SchemaBooleanField implements SchemaField { name: String! }
type SchemaArrayField implements SchemaField { name: String! }
type SchemaObjectField implements SchemaField { name: String! }
type SchemaDateField implements SchemaField { name: String! }
type SchemaFileField implements SchemaField { name: String! }
type SchemaGeoPointField implements SchemaField { name: String! }
type SchemaPolygonField implements SchemaField { name: String! }
type SchemaBytesField implements SchemaField { name: String! }
type SchemaACLField implements SchemaField { name: String! }
type SchemaPointerField implements SchemaField {
  name: String!
  targetClassName: String!
}
type SchemaRelationField implements SchemaField {
  name: String!
  targetClassName: String!
}

type Class {
  name: String!
  schemaFields: [SchemaField!]!
}

input SchemaFieldInput {
  name: String!
}

input SchemaStringFieldInput { name: String! }
input SchemaNumberFieldInput { name: String! }
input SchemaBooleanFieldInput { name: String! }
input SchemaArrayFieldInput { name: String! }
input SchemaObjectFieldInput { name: String! }
input SchemaDateFieldInput { name: String! }
input SchemaFileFieldInput { name: String! }
input SchemaGeoPointFieldInput { name: String! }
input SchemaPolygonFieldInput { name: String! }
input SchemaBytesFieldInput { name: String! }

input PointerFieldInput {
  name: String!
  targetClassName: String!
}

input RelationFieldInput {
  name: String!
  targetClassName: String!
}

input SchemaFieldsInput {
  addStrings: [SchemaStringFieldInput!]
  addNumbers: [SchemaNumberFieldInput!]
  addBooleans: [SchemaBooleanFieldInput!]
  addArrays: [SchemaArrayFieldInput!]
  addObjects: [SchemaObjectFieldInput!]
  addDates: [SchemaDateFieldInput!]
  addFiles: [SchemaFileFieldInput!]
  addGeoPoint: SchemaGeoPointFieldInput
  addPolygons: [SchemaPolygonFieldInput!]
  addBytes: [SchemaBytesFieldInput!]
  addPointers: [PointerFieldInput!]
  addRelations: [RelationFieldInput!]
  remove: [SchemaFieldInput!]
}

input CreateClassInput {
  name: String!
  schemaFields: SchemaFieldsInput
  clientMutationId: String
}

type CreateClassPayload {
  class: Class!
  clientMutationId: String
}

input UpdateClassInput {
  name: String!
  schemaFields: SchemaFieldsInput
  clientMutationId: String
}

type UpdateClassPayload {
  class: Class!
  clientMutationId: String
}

input DeleteClassInput {
  name: String!
  clientMutationId: String
}

type DeleteClassPayload {
  class: Class!
  clientMutationId: String
}
` + cloudConfigSDL + "\n"

// fixedMutations are the root mutations that exist whatever the classes.
const fixedMutations = `  signUp(input: SignUpInput!): SignUpPayload
  logIn(input: LogInInput!): LogInPayload
  logInWith(input: LogInWithInput!): LogInWithPayload
  logOut(input: LogOutInput!): LogOutPayload
  resetPassword(input: ResetPasswordInput!): ResetPasswordPayload
  confirmResetPassword(input: ConfirmResetPasswordInput!): ConfirmResetPasswordPayload
  sendVerificationEmail(input: SendVerificationEmailInput!): SendVerificationEmailPayload
  challenge(input: ChallengeInput!): ChallengePayload
  createFile(input: CreateFileInput!): CreateFilePayload
  createClass(input: CreateClassInput!): CreateClassPayload
  updateClass(input: UpdateClassInput!): UpdateClassPayload
  deleteClass(input: DeleteClassInput!): DeleteClassPayload
  updateCloudConfig(input: UpdateCloudConfigInput!): UpdateCloudConfigPayload
`
