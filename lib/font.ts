/**
 * The one font every picture names, charts and concept figures alike: the renderer embeds it
 * (DejaVu ships with Debian's fonts-dejavu-core; lib/render.ts loads it).
 */
export const FONT = "DejaVu Sans";
