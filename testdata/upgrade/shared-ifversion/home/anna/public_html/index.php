<?php /* index.php */ ?>
