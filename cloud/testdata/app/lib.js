// A second file of the test app, loaded with a relative require.
exports.greet = function (name) {
  return 'hello ' + name;
};
