package dev.kanuki.cli.board;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.UUID;

/**
 * The board's pages: {@code GET /} lists the posts and a form (with a fresh one-time token),
 * {@code POST /post} adds one and redirects back, {@code GET /stats} gives the counts as text
 * ({@code submitted N}, {@code kept M}, {@code applied M}, {@code parked P}, {@code lockWaits W}, one
 * a line) or, asked with {@code Accept: application/json} or {@code ?format=json}, as one JSON
 * object with the same names and {@code mode}.
 */
final class BoardServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final int MAX_TEXT = 2000;
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
            .withZone(ZoneOffset.UTC);

    private final transient Board board;
    private final boolean lockedMode;

    BoardServlet(Board board, boolean lockedMode) {
        this.board = board;
        this.lockedMode = lockedMode;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String path = request.getPathInfo() == null ? request.getServletPath() : request.getPathInfo();
        response.setHeader("Cache-Control", "no-store");
        if (path.equals("/stats")) {
            stats(request, response);
        } else if (path.equals("/") || path.isEmpty()) {
            page(response);
        } else {
            response.sendError(HttpServletResponse.SC_NOT_FOUND);
        }
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String token = request.getParameter("token");
        String author = request.getParameter("author");
        String text = request.getParameter("text");
        if (token == null || token.isBlank() || text == null || text.isBlank() || text.length() > MAX_TEXT) {
            response.sendError(HttpServletResponse.SC_BAD_REQUEST, "a post needs a token and a text of 1 to "
                    + MAX_TEXT + " characters");
            return;
        }
        Board.Outcome outcome = board.post(token, author == null || author.isBlank() ? "anonymous" : author.strip(),
                text.strip());
        response.setHeader("Cache-Control", "no-store");
        // What became of the post, for scripts and tests: locked (took the lock, waiting if busy),
        // applied (parking mode, the lock was free) or parked (parking mode, the holder applies it).
        response.setHeader("Kanuki-Post", switch (outcome) {
            case ADDED, REPEATED -> "locked";
            case APPLIED -> "applied";
            case PARKED -> "parked";
        });
        // 303: the browser shows the board with GET; reloading it does not post again
        response.setStatus(HttpServletResponse.SC_SEE_OTHER);
        response.setHeader("Location", request.getContextPath() + "/" + switch (outcome) {
            case ADDED, APPLIED -> "";
            case REPEATED -> "?again";
            case PARKED -> "?parked";
        });
    }

    /** The counts, as text or JSON (see the class comment). */
    private void stats(HttpServletRequest request, HttpServletResponse response) throws IOException {
        int kept = board.posts().size();
        int submitted = board.submitted();
        int parked = board.parked();
        long waits = board.lockWaits();
        String accept = request.getHeader("Accept");
        if ("json".equals(request.getParameter("format")) || accept != null && accept.contains("application/json")) {
            response.setContentType("application/json;charset=UTF-8");
            response.getWriter().print("{\"mode\":\"" + mode() + "\",\"submitted\":" + submitted + ",\"kept\":" + kept
                    + ",\"applied\":" + kept + ",\"parked\":" + parked + ",\"lockWaits\":" + waits + "}\n");
        } else {
            response.setContentType("text/plain;charset=UTF-8");
            response.getWriter().print("submitted " + submitted + "\nkept " + kept + "\napplied " + kept + "\nparked "
                    + parked + "\nlockWaits " + waits + "\n");
        }
    }

    private String mode() {
        return !lockedMode ? "none" : board.parks() ? "park" : "wait";
    }

    private void page(HttpServletResponse response) throws IOException {
        List<Board.Post> posts = board.posts();
        int submitted = board.submitted();
        response.setContentType("text/html;charset=UTF-8");
        PrintWriter out = response.getWriter();
        out.println("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>kanuki board</title>");
        out.println("<style>body{font-family:sans-serif;max-width:42em;margin:2em auto;color:#222}"
                + "li{margin:.4em 0}.meta{color:#777;font-size:.85em}#stats{padding:.5em;background:#f3f3f3}"
                + ".lost{color:#b00;font-weight:bold}textarea{width:100%}</style></head><body>");
        out.println("<h1>kanuki board</h1>");
        out.println("<p id=\"mode\">" + (!lockedMode ? "No lock (--lock none): posts sent at the same time overwrite each other."
                : board.parks() ? "Posts are written under a kanuki lock; a post that finds it busy is parked, and the "
                        + "lock's holder applies it before it lets go (--when-busy park): no post waits."
                : "Posts are written under a kanuki lock.") + "</p>");
        if (board.parks()) {
            int parked = board.parked();
            // Posts still being handled by a request count here until they are applied or parked.
            int lost = Math.max(0, submitted - posts.size() - parked);
            out.println("<p id=\"stats\">submitted: <span id=\"submitted\">" + submitted + "</span>, applied: <span id=\"applied\">"
                    + posts.size() + "</span>, parked: <span id=\"parked\">" + parked + "</span>, lost: <span id=\"lost\" class=\""
                    + (lost > 0 ? "lost" : "") + "\">" + lost + "</span></p>");
        } else {
            int lost = Math.max(0, submitted - posts.size());
            out.println("<p id=\"stats\">submitted: <span id=\"submitted\">" + submitted + "</span>, kept: <span id=\"kept\">"
                    + posts.size() + "</span>, lost: <span id=\"lost\" class=\"" + (lost > 0 ? "lost" : "") + "\">" + lost
                    + "</span></p>");
        }
        out.println("<form method=\"post\" action=\"post\" id=\"post-form\">");
        out.println("<input type=\"hidden\" name=\"token\" value=\"" + UUID.randomUUID() + "\">");
        out.println("<p><label>Name <input name=\"author\" id=\"author\"></label></p>");
        out.println("<p><textarea name=\"text\" id=\"text\" rows=\"3\" required placeholder=\"Your post\"></textarea></p>");
        out.println("<p><button type=\"submit\" id=\"submit\">Post</button></p></form>");
        out.println("<ol id=\"posts\">");
        for (Board.Post post : posts) {
            out.println("<li class=\"post\"><span class=\"text\">" + html(post.text()) + "</span> <span class=\"meta\">"
                    + html(post.author()) + ", " + TIME.format(Instant.ofEpochMilli(post.millis())) + "</span></li>");
        }
        out.println("</ol></body></html>");
    }

    private static String html(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (char c : s.toCharArray()) {
            switch (c) {
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '&' -> out.append("&amp;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }
}
