/** REST error bodies: `{"message": ...}` unless the original server sends a richer shape. */
export interface RestReply {
  status: number;
  body: unknown;
  /** An unexpected failure behind a 500, for the log only. */
  cause?: unknown;
}

export const reply = (status: number, message: string): RestReply => ({ status, body: { message } });

export const REST_ERRORS = {
  notFound: () => reply(404, 'Not found'),
  badRequest: () => reply(400, 'bad request data'),
  idInvalid: () => reply(400, 'id is invalid'),
  tooLarge: () => reply(413, 'request body too large'),
  internal: () => reply(500, 'Internal Server Error'),
};
