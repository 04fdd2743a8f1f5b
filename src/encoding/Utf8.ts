/** Text measured as UTF-8, the unit of every byte count of the contract (input estimates, prompt sizes). */

/** The number of UTF-8 bytes of a string. */
export const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8")
