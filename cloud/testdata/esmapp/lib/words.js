// An ES module with a default and a named export.
export default function slug(text) {
  return text.toLowerCase().split(' ').join('-');
}

export const words = (text) => text.split(' ').length;
