// A module main.js requires: its failures must name this file and line.
exports.total = function (order) {
  return order.lines.length * order.price;
};
