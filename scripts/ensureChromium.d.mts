// Types of ensureChromium.mjs, for the browser test.

/** The Chromium the browser test launches (TOOLPIN_CHROMIUM, else /usr/bin/chromium). */
export declare const CHROMIUM_PATH: string;

/** Installs Debian's chromium when missing; returns its path, or throws saying what to do. */
export declare function ensureChromium(): string;
