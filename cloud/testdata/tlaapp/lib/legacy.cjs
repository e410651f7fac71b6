// CommonJS: require() takes the package's "require" condition.
exports.legacy = require('toolkit/math').flavor;
