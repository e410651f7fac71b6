// Cloud code written as a Parse Server app would be: the cloud package's
// tests of Parse's semantics (issue 32) run it.

// Validators: master-key calls skip them unless validateMasterKey is set.
Parse.Cloud.define('members', () => 'welcome', { requireUser: true });
Parse.Cloud.define('strictMembers', () => 'welcome', { requireUser: true, validateMasterKey: true });
Parse.Cloud.beforeSave('Order', () => {}, { fields: { qty: { type: Number, required: true } } });
Parse.Cloud.beforeSave('StrictOrder', () => {}, { fields: { qty: { type: Number, required: true } }, validateMasterKey: true });
