# The bundler gives every module the bundle's import.meta.url; a module of a step's folder
# (kernels/NN_name/*.ts: step.ts and its helpers) reads the step's id from its folder, so each
# such module's code gets its own URL back. The bundle must sit one folder below the folder that
# holds kernels/ (dist/ in the project, assets/ in the site).
# Used by tools/bundle.sh and tools/build_site.ts on unminified `deno bundle` output.
/^\/\/ kernels\/[0-9][0-9]_[a-z0-9_]+\/[a-z0-9_]+\.ts$/ { step = substr($0, 4); print; next }
/^\/\/ / { step = "" }
step != "" { gsub(/import\.meta\.url/, "new URL(\"../" step "\", import.meta.url).href") }
{ print }
