/** The look the fleet's HTML pages share (the audit page, the status page): one family of pages. */
export const FLEET_PAGE_CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:90em;padding:0 1em;color:#1b1f24}
h1{font-size:1.45em;margin:.2em 0}h2{margin-top:1.6em;border-bottom:1px solid #ccd;font-size:1.2em}
[hidden]{display:none!important}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccd;padding:.25em .6em;text-align:left;vertical-align:top}
.meta{color:#555}`;
