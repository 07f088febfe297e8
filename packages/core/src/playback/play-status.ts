/** Playback status (VLink `BagReader::Status`, format reference §10.3). The integer values are VLink's. */
export enum PlayStatus {
  Stopped = 0,
  Paused = 1,
  Playing = 2,
}
