/**
 * Just enough of PNG to read chromium's screenshots in the browser tests: 8-bit RGB or RGBA,
 * not interlaced (what chromium writes), every filter type. Counts pixels of a colour, so a test
 * can say that what a person would see (a red banner, a green badge) is on the page.
 */
import { inflateSync } from 'node:zlib';

export interface Pixels {
  width: number;
  height: number;
  /** RGB, 3 bytes a pixel, row by row. */
  rgb: Uint8Array;
}

export function readPng(buf: Buffer): Pixels {
  if (buf.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG');
  let off = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, colour, , , interlace] = [data[8], data[9], data[10], data[11], data[12]];
      channels = colour === 2 ? 3 : colour === 6 ? 4 : 0;
      if (depth !== 8 || channels === 0 || interlace !== 0)
        throw new Error(`PNG depth ${depth}, colour type ${colour}, interlace ${interlace}: not read here`);
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const cur = new Uint8Array(stride);
  const prev = new Uint8Array(stride);
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? cur[i - channels]! : 0;
      const b = prev[i]!;
      const c = i >= channels ? prev[i - channels]! : 0;
      const x = line[i]!;
      let v: number;
      if (filter === 0) v = x;
      else if (filter === 1) v = x + a;
      else if (filter === 2) v = x + b;
      else if (filter === 3) v = x + ((a + b) >> 1);
      else {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
      }
      cur[i] = v & 0xff;
    }
    for (let px = 0; px < width; px++)
      for (let k = 0; k < 3; k++) rgb[(y * width + px) * 3 + k] = cur[px * channels + k]!;
    prev.set(cur);
  }
  return { width, height, rgb };
}

/** How many pixels are within `tolerance` of the colour (#rrggbb) on each channel. */
export function countColour(p: Pixels, hex: string, tolerance = 3): number {
  const want = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  let n = 0;
  for (let i = 0; i < p.rgb.length; i += 3)
    if (want.every((w, k) => Math.abs(p.rgb[i + k]! - w) <= tolerance)) n++;
  return n;
}
