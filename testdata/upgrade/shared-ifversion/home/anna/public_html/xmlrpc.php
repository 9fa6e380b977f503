<?php /* xmlrpc.php */ ?>
