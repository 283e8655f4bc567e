/** The `{message}` body of successful deletes and similar operations. */
export interface MessageResponse {
  message: string;
}
