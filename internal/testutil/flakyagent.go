package testutil

// FlakyAgent is a headless agent speaking Claude Code's stream-json, for
// `bash -c FlakyAgent agent COUNTER PROMPT`: its first turn is ended by a
// rate limit (error type rate_limit, no reset time, so a retry comes
// after its policy's backoff); every later one makes a Bash call and
// answers "tp=" followed by the TRACEPARENT it was given. COUNTER is a
// file that counts the turns.
const FlakyAgent = `n=$(cat "$1" 2>/dev/null || echo 0); echo $((n+1)) > "$1"
echo '{"type":"system","subtype":"init","session_id":"sess-flaky","permissionMode":"default"}'
if [ "$n" = 0 ]; then
  echo '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Rate limited."}]},"error":"rate_limit"}'
  echo '{"type":"result","subtype":"success","is_error":true,"result":"Rate limited.","session_id":"sess-flaky","total_cost_usd":0.1}'
  exit 1
fi
echo '{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":40,"output_tokens":20}},"session_id":"sess-flaky"}'
echo '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"a.txt","is_error":false}]},"session_id":"sess-flaky"}'
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"tp=%s","session_id":"sess-flaky","total_cost_usd":0.2,"usage":{"input_tokens":120,"output_tokens":450}}\n' "$TRACEPARENT"`
