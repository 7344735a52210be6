import { describe, expect, it } from 'vitest';
import { escapeHtml } from './escape-html.js';

describe('escapeHtml', () => {
  it('escapes the five characters that end text or a quoted attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
  });

  it('escapes & first, so an entity in the input stays literal text', () => {
    expect(escapeHtml('&lt;')).toBe('&amp;lt;');
  });

  it('leaves other text alone', () => {
    expect(escapeHtml('kube-system/coredns: 10.96.0.10 → ok')).toBe('kube-system/coredns: 10.96.0.10 → ok');
  });
});

describe('one escaper', () => {
  it('no other module of src/ escapes HTML by itself', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const { join, relative } = await import('node:path');
    const src = join(import.meta.dirname, '..');
    const own: string[] = [];
    for (const e of await readdir(src, { recursive: true, withFileTypes: true })) {
      if (!e.isFile() || !e.name.endsWith('.ts') || e.name.endsWith('.test.ts')) continue;
      const file = join(e.parentPath, e.name);
      // The tell-tale of an HTML escaper: ampersands turned into &amp; by a replace.
      if (/\.replace\(\/&\/g,\s*'&amp;'\)/.test(await readFile(file, 'utf8'))) own.push(relative(src, file));
    }
    expect(own).toEqual(['util/escape-html.ts']);
  });
});
