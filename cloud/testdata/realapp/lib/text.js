const crypto = require('crypto');

// slugify makes a URL-safe name.
exports.slugify = (s) => String(s || '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');

// signature signs a name with a per-app key (an HMAC, as CDNs check).
exports.signature = (name) => crypto.createHmac('sha256', 'app-key').update(name).digest('hex').slice(0, 16);
