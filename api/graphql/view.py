"""The GraphQL endpoint: HTTP (GET/POST, GraphiQL) and WebSocket on /graphql."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from types import MappingProxyType
from typing import Any

import strawberry
from cross_web import HTTPException
from graphql import DocumentNode, parse
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.exceptions import ConnectionRejectionError
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestProtocol, process_result
from strawberry.http.base import BaseRequestProtocol
from strawberry.http.streaming import HTTPStreamTransport, MultipartSubscriptionTransport
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.subscriptions import (
    GRAPHQL_SSE_PROTOCOL,
    GRAPHQL_TRANSPORT_WS_PROTOCOL,
    GRAPHQL_WS_PROTOCOL,
    MULTIPART_SUBSCRIPTION_PROTOCOL,
)
from strawberry.types import ExecutionResult, SubscriptionExecutionResult
from strawberry.types.graphql import OperationType
from strawberry.types.unset import UNSET, UnsetType

from api._strawberry import StreamingGraphQL
from api.graphql.alert_fanout import alert_fanout
from api.graphql.incremental import (
    DEFER_SPEC,
    IncrementalTransport,
    accepts_parts,
    asks_for_parts,
    map_increment_errors,
)
from api.graphql.negotiation import (
    APPLICATION_JSON,
    json_answer,
    json_media_type,
    negotiated_accept,
)
from api.graphql.prepared import PreparedLane
from api.graphql.response_cache import ResponseAnswers, Ticket
from api.graphql.response_cache.http import answer_cached, ticket_of
from api.http.authentication import Authenticator, authentication_refusal
from api.http.explorer import explorer_page
from api.http.guard import BODY_SCOPE_KEY, replay_body
from api.http.streams import EventStream, StreamContext, open_stream, stream_response
from api.limits.auth_throttle import AuthThrottle, InProcessThrottle
from api.observability.fallbacks import fell_back
from api.observability.observation import new_request_id
from api.observability.request_log import REQUEST_ID_SCOPE_KEY, record_operation
from api.operations.trusted import with_document_id
from api.settings.limits import MAX_BODY_BYTES, MAX_TOKENS, SHARED_PAYLOAD_BYTES, Lane
from api.wire.errors import error_extensions, error_response
from api.wire.json_response import encode_json_bytes
from api.wire.request_json import MalformedJSON, decode_request_json
from api.ws.connections import Connections, SocketContext
from api.ws.frames import SharedPayloads, encode_message
from api.ws.protocols import TransportWSHandler, WSHandler, bounded_receive
from domain.errors import BadUserInput, ProofgateError
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import ANONYMOUS, Principal, Role
from services.context import Services
from storage.trace import Trace

__all__ = ["GraphQLApp", "GraphQLEndpoint", "GraphQLSockets", "authentication_refusal"]

logger = logging.getLogger("proofgate.graphql")

TRACE_HEADER = "x-proofgate-trace"
_PRINCIPAL = "proofgate.principal"
_TICKET = "proofgate.response_ticket"
PROTOCOLS = (
    GRAPHQL_TRANSPORT_WS_PROTOCOL,
    GRAPHQL_WS_PROTOCOL,
    MULTIPART_SUBSCRIPTION_PROTOCOL,
    GRAPHQL_SSE_PROTOCOL,
)
"""WebSocket subprotocols, and the two HTTP streams (``api/http/streams.py``)."""


class GraphQLApp(StreamingGraphQL[RequestContext, None]):
    graphql_transport_ws_handler_class = TransportWSHandler
    graphql_ws_handler_class = WSHandler
    multipart_transport_class = IncrementalTransport
    stream_transport_classes_by_protocol: Mapping[str, type[HTTPStreamTransport]] = (
        MappingProxyType(
            {
                MULTIPART_SUBSCRIPTION_PROTOCOL: MultipartSubscriptionTransport,
                GRAPHQL_SSE_PROTOCOL: EventStream,
            }
        )
    )

    def __init__(
        self,
        schema: strawberry.Schema,
        services: Services,
        *,
        max_message_bytes: int = MAX_BODY_BYTES,
        shared_payload_bytes: int = SHARED_PAYLOAD_BYTES,
        auth_throttle: AuthThrottle | None = None,
        authenticator: Authenticator | None = None,
        prepared_lane: PreparedLane | None = None,
        max_tokens: int = MAX_TOKENS,
        response_answers: ResponseAnswers | None = None,
        direct_keepalive: bool = False,
        **options: Any,
    ) -> None:
        """``max_message_bytes``: the body limit, which WebSocket messages obey
        too; ``shared_payload_bytes``: what a fan-out's encoded payloads kept
        for its next sockets may hold (``api.ws.frames``); ``authenticator``:
        every route's authentication (``api/http/authentication.py``), else
        one over ``auth_throttle``,
        failed authentications per client address; ``prepared_lane``: where
        POSTs of known documents run (``api/graphql/prepared.py``); ``max_tokens``:
        the schema's document limit; ``response_answers``: the response
        cache, for the operations it takes (``api/graphql/response_cache/``);
        ``direct_keepalive``: keep-alives below Strawberry's handler, where
        the server offers direct frames (``api/ws/keepalive.py``)."""
        pipeline = services.pipeline
        if pipeline is not None:
            limit = pipeline.settings.subscriptions_per_connection
            options.setdefault("max_subscriptions_per_connection", limit)
            timeout = pipeline.settings.connection_init_timeout
            options.setdefault("connection_init_wait_timeout", timeout)
        # Keep-alives are sent by ``Connections.keep_alive``, one task for all.
        options["keep_alive"] = False
        options.setdefault("subscription_protocols", PROTOCOLS)
        super().__init__(schema, **options)
        self.services = services
        self.connections = Connections()
        self.direct_keepalive = direct_keepalive
        self.payloads = SharedPayloads(max_bytes=shared_payload_bytes)
        self.max_message_bytes = max_message_bytes
        self.authenticator = authenticator or Authenticator(
            services.storage,
            services.admin_key_hash,
            InProcessThrottle(auth_throttle or AuthThrottle()),
            services.keys,
        )
        self.prepared_lane = prepared_lane
        self.alert_fanout = alert_fanout(prepared_lane, self.payloads)
        """``threatAlerts`` over graphql-transport-ws without a task per subscription."""
        self.response_answers = response_answers
        self.max_tokens = max_tokens
        """Of a document parsed to negotiate its answer, as the schema parses it."""

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Coroutine[Any, Any, None]:
        """Strawberry's coroutine for a WebSocket, returned rather than
        awaited here: a frame per connection is memory an idle subscription
        keeps (docs/design.md, Alert fan-out)."""
        if scope["type"] == "http":
            return self._http(scope, receive, send)
        if scope["type"] == "websocket":
            receive = bounded_receive(receive, send, self.max_message_bytes)
        return super().__call__(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Authenticate before Strawberry sees the request, so a bad key is a
        # clean 401 with a GraphQL-shaped error rather than a failed context.
        request = Request(scope, receive)
        client = request.client.host if request.client else None
        try:
            authorization = request.headers.get("authorization")
            scope[_PRINCIPAL] = await self.authenticate(authorization, client)
        except ProofgateError as error:
            await authentication_refusal(error)(scope, receive, send)
            return
        self._negotiate(scope, request)
        answers = self.response_answers
        principal = scope[_PRINCIPAL]
        ticket = None if answers is None else ticket_of(answers, request, principal, TRACE_HEADER)
        if ticket is None or answers is None:
            await self._answer(scope, receive, send)
            return
        scope[_TICKET] = ticket

        def answer(send: Send) -> Awaitable[None]:
            return self._answer(scope, receive, send)

        await answer_cached(answers, ticket, request, send, answer)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        lane = self.prepared_lane
        if scope["method"] == "POST" and lane is not None and not asks_for_parts(Request(scope)):
            await self._post(scope, receive, send, lane)
            return
        await super().__call__(scope, receive, send)

    def _negotiate(self, scope: Scope, request: Request) -> None:
        """A request listing a stream and JSON whose operation does not stream
        goes on with ``Accept`` naming the JSON type it will be answered as,
        so Strawberry picks no stream transport (docs/design.md, Browser clients)."""

        def body() -> object:
            if scope["method"] != "POST":
                return dict(request.query_params)
            try:
                return decode_request_json(scope.get(BODY_SCOPE_KEY) or b"")
            except MalformedJSON:
                return None

        accept = request.headers.get("accept")
        media = negotiated_accept(accept, body, self._parse, self._document)
        if media is not None:
            scope["headers"] = [
                (name, media.encode() if name == b"accept" else value)
                for name, value in scope["headers"]
            ]

    def _parse(self, query: str) -> DocumentNode:
        cache = getattr(self.schema, "document_cache", None)
        if cache is None:
            return parse(query, max_tokens=self.max_tokens)
        document: DocumentNode = cache.parse(query, self.max_tokens)
        return document

    def _document(self, document_id: str) -> str | None:
        registry = getattr(self.schema, "operations", None)
        return None if registry is None else registry.document(document_id)

    async def _post(self, scope: Scope, receive: Receive, send: Send, lane: PreparedLane) -> None:
        """The prepared lane when it takes the request, else the full path
        (``api/graphql/prepared.py``). The body is the one ``HTTPGuard`` read."""
        body = scope.get(BODY_SCOPE_KEY)
        prepared = None if body is None else lane.prepare(body, scope[_PRINCIPAL])
        if prepared is not None and lane.admits(prepared):
            request = Request(scope, receive)
            sub_response = await self.get_sub_response(request)
            context = await self.get_context(request, sub_response)
            if context.trace is not None:
                result = None
                fell_back(Lane.PREPARED, "trace")
            else:
                result = await lane.run(prepared, context)
            if result is not None:
                response_data = await self.process_result(request, result)
                response = self.create_response(response_data, sub_response)
                await response(scope, receive, send)
                return
        lane.declined += 1
        await super().__call__(scope, receive, send)

    async def answer_post(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        body: bytes,
        authorization: str | None,
        media_type: str = APPLICATION_JSON,
    ) -> tuple[int, bytes] | None:
        """POST /graphql from ``GraphQLEntry`` (``api/graphql/entry.py``),
        which checked the headers and read ``body``: what ``_http`` does for
        it, but a prepared answer comes back as its status and JSON body, for
        the entry to send as ``media_type`` (the negotiated one, the request
        listing no stream) with every header in one message; None once the
        request was answered through ``send`` (a refused key, or the full path)."""
        client = scope.get("client")
        try:  # ``authenticate``'s rules, without its coroutine
            principal = await self.authenticator.authenticate(
                authorization, client[0] if client else None
            )
        except ProofgateError as error:
            await authentication_refusal(error)(scope, receive, send)
            return None
        scope[_PRINCIPAL] = principal
        answers = self.response_answers
        ticket = None if answers is None else answers.ticket_of_body(body, principal)
        if ticket is None or answers is None:
            return await self._answer_body(scope, receive, send, body, principal, media_type)
        if ticket.hit is not None:
            record_operation(ticket.key.operation, "query", principal)
            return 200, answers.body(ticket.hit, principal)
        with answers.recording(ticket):
            scope[_TICKET] = ticket
            answer = await self._answer_body(scope, receive, send, body, principal, media_type)
            answers.keep(ticket)
        return answer

    async def _answer_body(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        body: bytes,
        principal: Principal,
        media_type: str,
    ) -> tuple[int, bytes] | None:
        lane = self.prepared_lane
        if lane is not None:
            answer = await self._laned(scope, receive, lane, body, principal, media_type)
            if answer is not None:
                return answer
            lane.declined += 1
        await super().__call__(scope, replay_body(body, receive), send)
        return None

    async def _laned(
        self,
        scope: Scope,
        receive: Receive,
        lane: PreparedLane,
        body: bytes,
        principal: Principal,
        media_type: str,
    ) -> tuple[int, bytes] | None:
        """The prepared lane's answer as ``_post`` sends it, encoded once: the
        entry took no request with a trace or a streaming ``Accept``, so the
        context is a plain one, and nothing in the lane sets a header or a
        status on a sub-response (the differential tests compare both)."""
        prepared = lane.prepare(body, principal)
        if prepared is None or not lane.admits(prepared):
            return None
        services = self.services
        # By position (services, principal, loaders, request_id, trace,
        # request): keywords cost the call a dict.
        context = RequestContext(
            services,
            principal,
            Loaders(services.storage, principal.tenant),
            scope[REQUEST_ID_SCOPE_KEY],
            None,
            Request(scope, receive),
        )
        result = await lane.run(prepared, context)
        if result is None:
            return None
        response = _processed(result)
        ticket: Ticket | None = scope.get(_TICKET)
        if ticket is not None:
            ticket.response = response
        if media_type == APPLICATION_JSON:  # ``json_answer``'s 200 and the response, as they are
            return 200, encode_json_bytes(response)
        status, answer = json_answer(response, media_type)
        return status, encode_json_bytes(answer)

    async def process_result(self, request: Request, result: Any) -> GraphQLHTTPResponse:
        """Strawberry's, noted for the response cache when it takes the request."""
        response = process_result(result)
        ticket: Ticket | None = request.scope.get(_TICKET)
        if ticket is not None:
            ticket.response = response
        return response

    async def get_sub_response(self, request: Request | WebSocket) -> Response:
        """It carries the JSON media type the answer is sent as to
        ``create_response``, which has no request (docs/design.md, Browser clients)."""
        sub_response = await super().get_sub_response(request)
        if not isinstance(request, WebSocket):
            accept = request.headers.get("accept")
            sub_response.media_type = json_media_type(accept) or APPLICATION_JSON
        return sub_response

    def create_response(
        self,
        response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse],
        sub_response: Response,
    ) -> Response:
        """Strawberry's, as the negotiated media type and with its status
        (``json_answer``); a batch is a 200."""
        media_type = sub_response.media_type or APPLICATION_JSON
        status: int | None = sub_response.status_code
        data: object = response_data
        if not isinstance(response_data, list):
            status, data = json_answer(response_data, media_type, status)
        response = Response(
            self.encode_json(data), status_code=status or 200, media_type=media_type
        )
        response.headers.raw.extend(sub_response.headers.raw)
        if sub_response.background:
            response.background = sub_response.background
        return response

    def is_websocket_origin_allowed(self, request: WebSocket, origin: str) -> bool:
        """A page's WebSocket from another origin: allowed by the one list
        HTTP's CORS allows (``PROOFGATE_CORS_ORIGINS``), which the log names
        when it refuses (docs/design.md, Browser clients)."""
        if super().is_websocket_origin_allowed(request, origin):
            return True
        logger.warning(
            "Refused a WebSocket from origin %r (403): add it to PROOFGATE_CORS_ORIGINS "
            "to let pages on it connect",
            origin[:200],
        )
        return False

    async def authenticate(self, authorization: str | None, client: str | None) -> Principal:
        """Every route's rules: the failed-auth throttle, the observation's principal."""
        return await self.authenticator.authenticate(authorization, client)

    async def run(self, request: Any, context: Any = UNSET, root_value: Any = UNSET) -> Any:
        """Strawberry answers a request it cannot take (a mutation over GET, a
        body that is not JSON) in plain text; answer in GraphQL's shape."""
        try:
            return await super().run(request, context, root_value)
        except HTTPException as refusal:
            return error_response(_refusal(refusal), refusal.status_code)
        except BadUserInput as error:
            return error_response(error, 400)

    def decode_json(self, data: str | bytes) -> object:
        return decode_request_json(data)

    def parse_json(self, data: str | bytes) -> Any:
        try:
            return with_document_id(decode_request_json(data))
        except MalformedJSON as malformed:
            raise malformed.error from None

    def parse_query_params(self, params: Any) -> dict[str, Any]:
        parsed: dict[str, Any] = with_document_id(super().parse_query_params(params))
        return parsed

    def encode_json(self, data: object) -> str:
        """Responses, and WebSocket messages, whose shared payloads are
        encoded once for every socket (``api/ws/frames.py``)."""
        return encode_message(data, self.payloads)

    async def render_graphql_ide(self, request: Request) -> Response:
        return explorer_page(request)

    def should_render_graphql_ide(self, request: BaseRequestProtocol) -> bool:
        """Not for a GET that names a persisted query (APQ, documentId): it has no
        ``query`` either, and a browser's fetch accepts ``*/*``."""
        if "extensions" in request.query_params or "documentId" in request.query_params:
            return False
        return super().should_render_graphql_ide(request)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> RequestContext:
        principal: Principal = request.scope.get(_PRINCIPAL, ANONYMOUS)
        if isinstance(request, WebSocket):
            return SocketContext(
                services=self.services,
                principal=principal,
                loaders=Loaders(self.services.storage, principal.tenant),
                request_id=new_request_id(),
                request=request,
                response=response,
            )
        transport = self.stream_transport(request.headers)
        context = (RequestContext if transport is None else StreamContext)(
            services=self.services,
            principal=principal,
            loaders=Loaders(self.services.storage, principal.tenant),
            request_id=request.scope.get(REQUEST_ID_SCOPE_KEY) or new_request_id(),
            trace=_trace(principal, request),
            request=request,
            response=response,
        )
        if isinstance(context, StreamContext) and transport is not None:
            open_stream(transport, self.encode_json_string, context, request)
        return context

    async def streaming_response(
        self,
        request: Request,
        result: SubscriptionExecutionResult,
        protocol: GraphQLRequestProtocol,
        sub_response: Response,
    ) -> Response:
        """A subscription (or any operation) asked for as a stream: registered
        as a connection while it is open (``api/http/streams.py``)."""
        pending: list[Any] = []

        async def encode(value: Any) -> Any:
            nonlocal pending
            response, pending = await self.stream_result(request, value, pending)
            return response

        return await stream_response(
            self.connections,
            request,
            result,
            encode,
            super().create_streaming_response,
            sub_response,
        )

    async def stream_result(
        self, request: Request, value: Any, all_pending: list[Any]
    ) -> tuple[GraphQLHTTPResponse, list[Any]]:
        map_increment_errors(value, request.scope.get(REQUEST_ID_SCOPE_KEY))
        return await super().stream_result(request, value, all_pending)

    async def create_streaming_response(
        self,
        request: Request | WebSocket,
        stream: Callable[[], AsyncIterator[str]],
        sub_response: Response,
        headers: Mapping[str, str],
    ) -> Response:
        """Strawberry streams a query's increments (@defer, @stream) in parts
        whatever the client accepts; one that did not ask for parts is told
        how to, rather than sent what it cannot read."""
        if DEFER_SPEC in headers.get("Content-Type", "") and not accepts_parts(request):
            refusal = BadUserInput(
                "@defer and @stream answer in parts, which this request did not accept",
                hint="Send Accept: multipart/mixed;deferSpec=20220824,application/json.",
            )
            return error_response(refusal, 406)
        return await super().create_streaming_response(request, stream, sub_response, headers)

    async def on_ws_connect(self, context: RequestContext) -> UnsetType | dict[str, object] | None:
        """Authenticates ``connection_init``'s ``authorization``; no key is anonymous."""
        params = getattr(context, "connection_params", None) or {}
        authorization = params.get("authorization") or params.get("Authorization")
        if authorization is not None and not isinstance(authorization, str):
            refusal = BadUserInput(
                "authorization must be a string",
                hint="Send connection_init with payload {authorization: 'Bearer <key>'}.",
            )
            raise ConnectionRejectionError(
                {"message": refusal.message, **error_extensions(refusal)}
            )
        try:
            principal = await self.authenticate(authorization, context.client_host)
        except ProofgateError as error:
            payload = {"message": error.message, **error_extensions(error)}
            raise ConnectionRejectionError(payload) from None
        context.principal = principal
        context.loaders = Loaders(self.services.storage, principal.tenant)
        acknowledged: UnsetType = UNSET
        return acknowledged


def _processed(result: ExecutionResult) -> GraphQLHTTPResponse:
    """Strawberry's ``process_result`` of a result answered whole (the
    prepared lane's: never incremental), built without its two dicts to
    unpack: the same keys in the same order."""
    response: GraphQLHTTPResponse = {"data": result.data}
    errors, extensions = result.errors, result.extensions
    if errors:
        response["errors"] = [error.formatted for error in errors]
    if extensions:
        response["extensions"] = extensions
    return response


def _trace(principal: Principal, request: Request) -> Trace | None:
    """Only for a caller with a key: a trace names the access patterns and
    items a request touched, which is no business of an anonymous caller."""
    if principal.role is Role.ANONYMOUS or request.headers.get(TRACE_HEADER) != "1":
        return None
    return Trace()


def _refusal(refusal: HTTPException) -> BadUserInput:
    cause = refusal.__cause__
    if isinstance(cause, InvalidOperationTypeError) and (
        cause.operation_type is OperationType.SUBSCRIPTION
    ):
        return BadUserInput(
            "A subscription over HTTP needs a streaming Accept header",
            hint="Send Accept: text/event-stream (graphql-sse) or "
            'multipart/mixed;subscriptionSpec="1.0" (Apollo), or subscribe over a WebSocket '
            "to /graphql (graphql-transport-ws or graphql-ws).",
        )
    return BadUserInput(refusal.reason)


class GraphQLEndpoint:
    """Routes to the ``GraphQLApp`` the lifespan keeps on ``app.state.graphql``:
    its services need the open store, which exists only once the app starts."""

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        graphql: GraphQLApp = scope["app"].state.graphql
        return graphql(scope, receive, send)


class GraphQLSockets:
    """A WebSocket to ``/graphql`` goes to the GraphQL endpoint from here,
    past Starlette's exception middleware and router. For it they come to
    the same: the router would route it to ``WebSocketRoute("/graphql")``
    (a path it matches there, whatever the root path), and the exception
    middleware re-raise what the endpoint raises (it answers its own
    refusals). Their frames would be kept for the connection's whole life,
    memory an idle subscription keeps (docs/design.md, Alert fan-out)."""

    def __init__(self, app: ASGIApp, *, path: str = "/graphql") -> None:
        self.app = app
        self.path = path
        self.endpoint = GraphQLEndpoint()

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if scope["type"] == "websocket" and scope["path"] == self.path:
            return self.endpoint(scope, receive, send)
        return self.app(scope, receive, send)
